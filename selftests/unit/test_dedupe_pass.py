"""The local array's dedupe pass: which blocks it pairs, and the kernel ABI it packs (linux/fs.h)."""

from __future__ import annotations

from iogate.arrays import dedupe_pass
from iogate.arrays.dedupe_pass import Block, duplicates


def test_every_repeat_is_paired_with_the_first_block_of_its_content() -> None:
    blocks = [Block(0, 0), Block(0, 65536), Block(0, 131072), Block(1, 0), Block(1, 65536), Block(1, 131072)]
    digests = [b"a", b"b", b"a", b"c", b"b", b"a"]
    pairs = duplicates(iter(zip(blocks, digests, strict=True)))
    assert pairs == [(Block(0, 0), Block(0, 131072)), (Block(0, 65536), Block(1, 65536)), (Block(0, 0), Block(1, 131072))]


def test_unique_blocks_give_no_pair() -> None:
    assert duplicates(iter([(Block(0, 0), b"a"), (Block(0, 65536), b"b")])) == []


def test_the_request_matches_struct_file_dedupe_range() -> None:
    # struct file_dedupe_range: u64 src_offset, u64 src_length, u16 dest_count, u16 reserved1, u32 reserved2 (24 bytes);
    # struct file_dedupe_range_info: s64 dest_fd, u64 dest_offset, u64 bytes_deduped, s32 status, u32 reserved (32 bytes).
    assert dedupe_pass._RANGE.size == 24
    assert dedupe_pass._INFO.size == 32
    # FIDEDUPERANGE = _IOWR(0x94, 54, struct file_dedupe_range): direction read|write (3) in bits 30-31, size in 16-29.
    assert dedupe_pass.FIDEDUPERANGE == (3 << 30) | (24 << 16) | (0x94 << 8) | 54
