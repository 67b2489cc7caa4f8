//! The colon-separated unsigned integers of a Paraver record line (`1:3:1:3:1:1000:7259:1`),
//! parsed byte by byte ([`parse_fields`], the reference) or eight bytes at a time
//! ([`parse_padded`], the same values, for lines inside a buffer with room after them).

/// Parses colon-separated unsigned integers onto the end of `out` in one pass; a field that is
/// empty or not a number becomes `u64::MAX`, a carriage return is ignored, and a number past
/// `u64::MAX` wraps.
pub fn parse_fields(line: &[u8], out: &mut Vec<u64>) {
    let (mut v, mut ok, mut any) = (0u64, true, false);
    for &c in line {
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            any = true;
        } else if c == b':' {
            out.push(if ok && any { v } else { u64::MAX });
            (v, ok, any) = (0, true, false);
        } else if c != b'\r' {
            ok = false;
        }
    }
    out.push(if ok && any { v } else { u64::MAX });
}

/// Bytes a buffer must hold before a line's start and past its end for [`parse_padded`].
pub const PAD: usize = 64;

const ONES: u64 = 0x0101_0101_0101_0101;
const ZERO_CHARS: u64 = ONES * b'0' as u64;

#[inline(always)]
fn load(buf: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The colons and the bytes that are not digits among the 64 bytes from `at` (bit k for
/// byte `at + k`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks(buf: &[u8], at: usize) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
        _mm_sub_epi8,
    };
    let block = &buf[at..at + 64];
    let (mut c, mut d) = (0u64, 0u64);
    // SAFETY: SSE2 is part of x86_64; the loads read bytes 16k..16k+16 of `block` (64 bytes),
    // unaligned loads being allowed.
    unsafe {
        let (colon, zero, nine) = (
            _mm_set1_epi8(b':' as i8),
            _mm_set1_epi8(b'0' as i8),
            _mm_set1_epi8(9),
        );
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let is_colon = _mm_movemask_epi8(_mm_cmpeq_epi8(v, colon)) as u32 as u64;
            // A digit less '0' is at most 9 (as an unsigned byte).
            let less = _mm_sub_epi8(v, zero);
            let is_digit = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(less, nine), nine));
            c |= is_colon << (16 * k);
            d |= u64::from(!(is_digit as u32) & 0xffff) << (16 * k);
        }
    }
    (c, d)
}

/// The colons and the bytes that are not digits among the 64 bytes from `at` (bit k for
/// byte `at + k`), eight bytes at a time.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn masks(buf: &[u8], at: usize) -> (u64, u64) {
    // The high bit of each byte that is zero, then one bit per byte.
    let zero = |a: u64| !(((a & (ONES * 0x7f)) + ONES * 0x7f) | a | (ONES * 0x7f));
    let pack = |m: u64| ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut c, mut d) = (0u64, 0u64);
    for k in 0..8 {
        let w = load(buf, at + 8 * k);
        let a = w ^ ZERO_CHARS;
        let non_digit = (((a & (ONES * 0x7f)) + ONES * 118) | a) & (ONES * 0x80);
        c |= pack(zero(w ^ (ONES * b':' as u64))) << (8 * k);
        d |= pack(non_digit) << (8 * k);
    }
    (c, d)
}

/// The value of the `len` (0 to 8) digits that end just before byte `end`.
#[inline(always)]
fn digits_before(buf: &[u8], end: usize, len: usize) -> u64 {
    // The number's low digits are the word's high bytes; a shift in two halves keeps none
    // for `len` 0.
    let half = 4 * (8 - len) as u32;
    let keep = (u64::MAX << half) << half;
    let d = (load(buf, end - 8) & keep).wrapping_sub(ZERO_CHARS & keep);
    // Pairs, then fours, then eight (Lemire's eight-digit conversion).
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    let mask = 0x0000_00ff_0000_00ff;
    ((d & mask)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((d >> 16) & mask).wrapping_mul(1 + (10_000 << 32))))
        >> 32
}

/// The value of the digits `buf[start..end]` (at most 16 of them; none gives `u64::MAX`).
#[inline(always)]
fn field(buf: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    if len == 0 {
        return u64::MAX;
    }
    if len <= 8 {
        return digits_before(buf, end, len);
    }
    digits_before(buf, end - 8, len - 8) * 100_000_000 + digits_before(buf, end, 8)
}

/// Parses `buf[start..end]` as [`parse_fields`] does, into the same values, a 64-byte block of
/// the line at a time; `buf` must hold [`PAD`] bytes before `start` and past `end` (whatever
/// they are), else the line is parsed byte by byte, as it is when it holds anything but
/// digits and colons (a carriage return at its end aside) or a number of over 16 digits.
pub fn parse_padded(buf: &[u8], start: usize, end: usize, out: &mut Vec<u64>) {
    let line_end = end;
    let end = if end > start && buf[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    if start < PAD || end + PAD > buf.len() {
        return parse_fields(&buf[start..line_end], out);
    }
    let mark = out.len();
    let mut from = start;
    let mut block = start;
    while block < end {
        let (mut colons, non_digits) = masks(buf, block);
        let inside = if end - block >= 64 {
            u64::MAX
        } else {
            (1u64 << (end - block)) - 1
        };
        colons &= inside;
        if non_digits & !colons & inside != 0 {
            out.truncate(mark);
            return parse_fields(&buf[start..line_end], out);
        }
        while colons != 0 {
            let at = block + colons.trailing_zeros() as usize;
            if at - from > 16 {
                out.truncate(mark);
                return parse_fields(&buf[start..line_end], out);
            }
            out.push(field(buf, from, at));
            from = at + 1;
            colons &= colons - 1;
        }
        block += 64;
    }
    if end - from > 16 {
        out.truncate(mark);
        return parse_fields(&buf[start..line_end], out);
    }
    out.push(field(buf, from, end));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn both(line: &[u8]) -> (Vec<u64>, Vec<u64>) {
        let mut a = Vec::new();
        parse_fields(line, &mut a);
        let mut buf = b"12345678:".repeat(8);
        buf.extend_from_slice(line);
        buf.extend_from_slice(&b"\n12345678".repeat(8));
        let mut b = vec![7];
        parse_padded(&buf, 72, 72 + line.len(), &mut b);
        (a, b[1..].to_vec())
    }

    #[test]
    fn records_parse_alike() {
        for l in [
            &b"1:7:1:7:1:1000:7259:1"[..],
            b"2:1:1:1:1:123456789012:50000001:41:42000050:18446744073709551615",
            b"3:1::2",
            b"1:2:",
            b":",
            b"12x:3",
            b"1:2\r",
            b"99999999999999999999999:1",
            b"12345678:123456781234567812345678",
        ] {
            let (a, b) = both(l);
            assert_eq!(a, b, "{}", String::from_utf8_lossy(l));
        }
        assert_eq!(both(b"1:1000:7259").0, vec![1, 1000, 7259]);
    }

    proptest! {
        #[test]
        fn any_line_parses_as_byte_by_byte(line in proptest::collection::vec(
            prop_oneof![8 => b'0'..=b'9', 3 => Just(b':'), 1 => Just(b'\r'), 1 => any::<u8>()],
            0..200,
        )) {
            let (a, b) = both(&line);
            prop_assert_eq!(a, b);
        }
    }
}
