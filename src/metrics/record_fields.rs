//! The colon-separated unsigned integers of a Paraver record line (`1:3:1:3:1:1000:7259:1`).
//!
//! Two parsers give the same values: a byte-by-byte one for any line, and on x86-64 with AVX2
//! one over 64-byte blocks ([`fast_parser`] picks it): masks of separators and digits, then
//! each field right-aligned in a vector and converted with multiply-adds, two fields at a time.
//! On the benchmark trace it takes 32 ns a line where the byte-by-byte parser takes 52 (one
//! core, the same 50 MB). Lines it does not take as they come (an empty field, a character that
//! is neither a digit nor a separator, a field of more than 16 digits, the last 80 bytes of the
//! text) go to the byte-by-byte parser whole.

/// A line parser: the fields of the line at the start of the text onto the vector; returns the
/// line's length (up to its break or the end of the text).
pub type Parse = fn(&[u8], &mut Vec<u64>) -> usize;

/// Parses colon-separated unsigned integers onto the end of `out` in one pass; a field that is
/// empty or not a number becomes `u64::MAX`, a carriage return is ignored, and a number past
/// `u64::MAX` wraps.
pub fn parse_fields(line: &[u8], out: &mut Vec<u64>) {
    parse_line(line, out);
}

/// As [`parse_fields`] for the line at the start of `text`, up to its first line break (or the
/// end of `text`); returns the length of the line (so a separate search for the break is not
/// needed).
#[inline]
pub fn parse_line(text: &[u8], out: &mut Vec<u64>) -> usize {
    let (mut v, mut ok, mut any) = (0u64, true, false);
    for (i, &c) in text.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            any = true;
        } else if c == b':' {
            out.push(if ok && any { v } else { u64::MAX });
            (v, ok, any) = (0, true, false);
        } else if c == b'\n' {
            out.push(if ok && any { v } else { u64::MAX });
            return i;
        } else if c != b'\r' {
            ok = false;
        }
    }
    out.push(if ok && any { v } else { u64::MAX });
    text.len()
}

/// The fastest parser this processor runs, giving what [`parse_line`] gives.
pub fn fast_parser() -> Parse {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("sse4.1")
        && std::arch::is_x86_feature_detected!("ssse3")
    {
        return avx2::parse_line;
    }
    parse_line
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Per field length (1 to 16), the shuffle that right-aligns the field's bytes in 16, with
    /// zeros before.
    static ALIGN: [[u8; 16]; 17] = {
        let mut t = [[0x80u8; 16]; 17];
        let mut l = 1;
        while l <= 16 {
            let mut j = 16 - l;
            while j < 16 {
                t[l][j] = (j + l - 16) as u8;
                j += 1;
            }
            l += 1;
        }
        t
    };

    /// Bit masks of the colons, line breaks and digits among the 64 bytes at `p`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn masks(p: *const u8) -> (u64, u64, u64) {
        // SAFETY (for the caller): 64 bytes from `p` are readable.
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(32).cast()),
            )
        };
        let eq = |v, k: u8| _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(k as i8)));
        let digit = |v| {
            let lo = _mm256_cmpgt_epi8(v, _mm256_set1_epi8((b'0' - 1) as i8));
            let hi = _mm256_cmpgt_epi8(_mm256_set1_epi8((b'9' + 1) as i8), v);
            _mm256_movemask_epi8(_mm256_and_si256(lo, hi))
        };
        let both = |x: i32, y: i32| u64::from(x as u32) | u64::from(y as u32) << 32;
        (
            both(eq(a, b':'), eq(b, b':')),
            both(eq(a, b'\n'), eq(b, b'\n')),
            both(digit(a), digit(b)),
        )
    }

    /// The `len` (1 to 16) digits at `p` as four 32-bit groups of four digits, most
    /// significant first.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn groups(p: *const u8, len: usize) -> __m128i {
        debug_assert!(len <= 16);
        // SAFETY (for the caller): 16 bytes from `p` are readable; `len` is at most 16.
        let (v, align) = unsafe {
            (
                _mm_loadu_si128(p.cast()),
                _mm_loadu_si128(ALIGN.as_ptr().add(len).cast()),
            )
        };
        let digits = _mm_shuffle_epi8(_mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8)), align);
        let pairs = _mm_maddubs_epi16(digits, _mm_set1_epi16(0x010A));
        _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064))
    }

    /// The values of two fields' groups, stored at `out` and the slot after it.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store_two(a: __m128i, b: __m128i, out: *mut u64) {
        let eights = _mm_madd_epi16(_mm_packus_epi32(a, b), _mm_set1_epi32(0x0001_2710));
        let high = _mm_mul_epu32(eights, _mm_set1_epi64x(100_000_000));
        let v = _mm_add_epi64(high, _mm_srli_epi64(eights, 32));
        // SAFETY (for the caller): two slots from `out` are writable.
        unsafe { _mm_storeu_si128(out.cast(), v) };
    }

    /// Whether a field that ends at one of the separators `seps` (a non-empty mask) has more
    /// than 16 bytes: a run of 17 bytes that are not separators, below the last separator.
    #[inline]
    fn long_field(seps: u64) -> bool {
        let x = !seps;
        let two = x & (x >> 1);
        let four = two & (two >> 2);
        let eight = four & (four >> 4);
        let seventeen = eight & (eight >> 8) & (x >> 16);
        let below_last = u64::MAX >> seps.leading_zeros();
        seventeen & below_last != 0
    }

    /// [`super::parse_line`] over 64-byte blocks.
    pub fn parse_line(text: &[u8], out: &mut Vec<u64>) -> usize {
        // SAFETY: `fast_parser` hands this out only where the processor has AVX2, SSSE3 and
        // SSE4.1.
        unsafe { parse_blocks(text, out) }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn parse_blocks(text: &[u8], out: &mut Vec<u64>) -> usize {
        let n0 = out.len();
        let mut base = 0;
        // Each block needs 16 bytes past its 64 for the last field's load.
        while text.len() - base >= 80 {
            // SAFETY: `base + 80 <= text.len()`.
            let p = unsafe { text.as_ptr().add(base) };
            let (colon, brk, digit) = unsafe { masks(p) };
            let (upto, end) = match brk {
                0 => (u64::MAX, None),
                b => (
                    (2u64 << b.trailing_zeros()).wrapping_sub(1),
                    Some(b.trailing_zeros() as usize),
                ),
            };
            let mut seps = (colon | brk) & upto;
            let odd = !(digit | colon | brk) & upto;
            if odd != 0 || seps == 0 || seps & ((seps << 1) | 1) != 0 || long_field(seps) {
                break;
            }
            out.reserve(66);
            let at = out.len();
            // SAFETY: at least 66 slots are reserved past `at`; a block holds at most 32
            // non-empty fields, each stored pair writes two slots.
            let o = unsafe { out.as_mut_ptr().add(at) };
            let (mut k, mut f) = (0, 0);
            while seps != 0 {
                let e1 = seps.trailing_zeros() as usize;
                seps &= seps - 1;
                // SAFETY: a field starts before byte 64 of the block: 16 bytes are readable;
                // no field up to the last separator is longer than 16 (`long_field`).
                let g1 = unsafe { groups(p.add(f), e1 - f) };
                f = e1 + 1;
                let single = seps == 0;
                let g2 = if single {
                    g1
                } else {
                    let e2 = seps.trailing_zeros() as usize;
                    seps &= seps - 1;
                    let g = unsafe { groups(p.add(f), e2 - f) };
                    f = e2 + 1;
                    g
                };
                unsafe { store_two(g1, g2, o.add(k)) };
                k += if single { 1 } else { 2 };
            }
            // SAFETY: the first `k` slots past `at` were written.
            unsafe { out.set_len(at + k) };
            if let Some(e) = end {
                return base + e;
            }
            base += f;
        }
        out.truncate(n0);
        super::parse_line(text, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_numbers_and_anything_else_is_max() {
        let mut v = Vec::new();
        parse_fields(b"1:7::12x:18446744073709551615:3\r", &mut v);
        assert_eq!(v, vec![1, 7, u64::MAX, u64::MAX, u64::MAX, 3]);
        let mut w = Vec::new();
        assert_eq!(
            parse_line(b"1:7::12x:18446744073709551615:3\r\n2:5", &mut w),
            32
        );
        assert_eq!(w, v);
    }

    /// Lines of fields drawn mostly from digits, with now and then what the block parser hands
    /// back to the byte-by-byte one (a letter, a carriage return, a space, an empty field, a
    /// field of more than 16 digits).
    fn text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let field = prop_oneof![
            8 => "[0-9]{1,8}",
            3 => "[0-9]{9,16}",
            1 => "[0-9]{17,22}",
            1 => "",
            1 => "[0-9]{0,3}[a\r ][0-9]{0,3}",
        ];
        let line = prop::collection::vec(field, 1..40).prop_map(|f| f.join(":"));
        prop::collection::vec(line, 1..12).prop_map(|l| l.join("\n").into_bytes())
    }

    proptest::proptest! {
        /// The fast parser gives what the byte-by-byte one gives, line by line, wherever the
        /// text ends.
        #[test]
        fn fast_parser_agrees(text in text(), cut in 1usize..2000) {
            let text = &text[..text.len().min(cut)];
            let fast = fast_parser();
            let (mut at, mut a, mut b) = (0, Vec::new(), Vec::new());
            while at < text.len() {
                let la = parse_line(&text[at..], &mut a);
                let lb = fast(&text[at..], &mut b);
                proptest::prop_assert_eq!(la, lb);
                proptest::prop_assert_eq!(&a, &b);
                at += la + 1;
            }
        }
    }

    #[test]
    fn fast_parser_reads_the_bench_record_shapes() {
        let line = b"2:236:1:236:1:645725:50000001:41:42000050:14160:42000059:9440";
        let long = [&line.repeat(3)[..], b"\n"].concat();
        let text = [&line[..], b"\n", &long].concat();
        let mut v = Vec::new();
        assert_eq!(fast_parser()(&text, &mut v), line.len());
        let fields = [
            2, 236, 1, 236, 1, 645725, 50000001, 41, 42000050, 14160, 42000059, 9440,
        ];
        assert_eq!(v, fields);
        // A line of 186 bytes spans three blocks: the fields that cross a block's end are
        // read whole (`9440` and the `2` of the next copy join).
        v.clear();
        assert_eq!(
            fast_parser()(&text[line.len() + 1..], &mut v),
            3 * line.len()
        );
        assert_eq!(v.len(), 34);
        assert_eq!(v[11], 94402);
        assert_eq!(v[..11], fields[..11]);
    }
}
