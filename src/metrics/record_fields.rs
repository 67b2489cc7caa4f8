//! The colon-separated unsigned integers of a Paraver record line (`1:3:1:3:1:1000:7259:1`).
//!
//! Two parsers give the same values: a byte-by-byte one for any line, and on x86-64 with AVX2
//! one over runs of lines ([`fast_run`] picks it). The run parser walks the text in 64-byte
//! blocks, each starting where a field starts: masks of separators and digits, then each
//! field right-aligned in a vector and converted with multiply-adds, four fields at a time, and
//! the line breaks among the separators close the lines. Its masks and stores serve every line
//! in a block, so a line costs no call and no block of its own. Where a block holds anything
//! but plain numbers (an empty field, a character that is neither a digit nor a separator, a
//! field of more than 16 digits) or the text's last 80 bytes begin, it stops at the start of
//! that line, which [`parse_records`] hands to the byte-by-byte parser (or, for a comment or
//! communicator line, only finds its end).

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

/// Where one record line lies in a text: its bytes `start..end` (the break excluded) and the
/// index of its first field among the parsed values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// The line's first byte.
    pub start: u32,
    /// One past the line's last byte (its break, when it has one).
    pub end: u32,
    /// Its first field's index among the values.
    pub vals: u32,
}

/// A run parser: from the line at `at` in the text, parses record lines as long as every field
/// is a plain number (1 to 16 digits), pushing each line's fields onto the values and its span
/// onto the spans; returns the start of the first line it left, for [`parse_line`] or the
/// caller (a line with anything else in it, a comment, a communicator, an empty line, or one
/// of the text's last 80 bytes). Its values are those [`parse_line`] would give.
pub type Run = fn(&[u8], usize, &mut Vec<u64>, &mut Vec<Span>) -> usize;

/// Parses every line of `text` with `run` and, for the lines it leaves, [`parse_line`]:
/// each line's span onto `spans` and its fields onto `vals`. Comment (`#`), communicator
/// (`c:`) and empty lines get a span and no fields. Returns whether every field parsed is a
/// number (none is `u64::MAX`), so that the caller can skip looking.
pub fn parse_records(text: &[u8], run: Run, vals: &mut Vec<u64>, spans: &mut Vec<Span>) -> bool {
    let (mut start, mut numbers) = (0, true);
    while start < text.len() {
        start = run(text, start, vals, spans);
        let Some(rest) = text.get(start..).filter(|r| !r.is_empty()) else {
            break;
        };
        let at = vals.len() as u32;
        let end = start
            + if matches!(rest[0], b'\n' | b'#') || rest.starts_with(b"c:") {
                memchr::memchr(b'\n', rest).unwrap_or(rest.len())
            } else {
                let len = parse_line(rest, vals);
                numbers &= !vals[at as usize..].contains(&u64::MAX);
                len
            };
        spans.push(Span {
            start: start as u32,
            end: end as u32,
            vals: at,
        });
        start = end + 1;
    }
    numbers
}

/// The run parser where nothing faster than [`parse_line`] runs: it parses no line.
fn no_run(_: &[u8], at: usize, _: &mut Vec<u64>, _: &mut Vec<Span>) -> usize {
    at
}

/// The fastest run parser this processor runs (its values are those [`parse_line`] gives).
pub fn fast_run() -> Run {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        return avx2::parse_run;
    }
    no_run
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Span;
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
    #[target_feature(enable = "avx2,bmi1,lzcnt,popcnt")]
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

    /// The digits of two fields, `la` (1 to 16) at `a` and `lb` at `b`, as four 32-bit groups
    /// of four digits each (most significant first), `a`'s in the low lane.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,lzcnt,popcnt")]
    unsafe fn groups2(a: *const u8, la: usize, b: *const u8, lb: usize) -> __m256i {
        debug_assert!(la <= 16 && lb <= 16);
        // SAFETY (for the caller): 16 bytes from `a` and from `b` are readable; the lengths
        // are at most 16.
        let (v, align) = unsafe {
            (
                _mm256_loadu2_m128i(b.cast(), a.cast()),
                _mm256_loadu2_m128i(ALIGN.as_ptr().add(lb).cast(), ALIGN.as_ptr().add(la).cast()),
            )
        };
        let digits = _mm256_shuffle_epi8(_mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8)), align);
        let pairs = _mm256_maddubs_epi16(digits, _mm256_set1_epi16(0x010A));
        _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x0001_0064))
    }

    /// The values of four fields from their groups (`x` holds the first and third, `y` the
    /// second and fourth), stored in order at `out`.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,lzcnt,popcnt")]
    unsafe fn store4(x: __m256i, y: __m256i, out: *mut u64) {
        let eights = _mm256_madd_epi16(_mm256_packus_epi32(x, y), _mm256_set1_epi32(0x0001_2710));
        let high = _mm256_mul_epu32(eights, _mm256_set1_epi64x(100_000_000));
        let v = _mm256_add_epi64(high, _mm256_srli_epi64(eights, 32));
        // SAFETY (for the caller): four slots from `out` are writable.
        unsafe { _mm256_storeu_si256(out.cast(), v) };
    }

    /// The bits where a run of 17 bytes that are not separators (`seps`) starts, within the
    /// block: a field of more than 16 bytes.
    #[inline]
    fn long_fields(seps: u64) -> u64 {
        let x = !seps;
        let two = x & (x >> 1);
        let four = two & (two >> 2);
        let eight = four & (four >> 4);
        eight & (eight >> 8) & (x >> 16)
    }

    /// The fields ending at the separators `seps` of the block at `p`, whose first field
    /// starts at byte 0, stored from `o`; returns how many.
    ///
    /// # Safety
    /// 80 bytes from `p` are readable, every field is 1 to 16 digits, and `o` has room for
    /// the fields and three more.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,lzcnt,popcnt")]
    unsafe fn convert(p: *const u8, mut seps: u64, o: *mut u64) -> usize {
        let (mut k, mut f) = (0, 0);
        let next = |seps: &mut u64, f: &mut usize| {
            let e = seps.trailing_zeros() as usize;
            *seps &= *seps - 1;
            // SAFETY: a field starts before byte 64 of the block.
            let at = unsafe { p.add(*f) };
            let len = e - *f;
            *f = e + 1;
            (at, len)
        };
        while seps.count_ones() >= 4 {
            let (a, la) = next(&mut seps, &mut f);
            let (b, lb) = next(&mut seps, &mut f);
            let (c, lc) = next(&mut seps, &mut f);
            let (d, ld) = next(&mut seps, &mut f);
            // SAFETY: as the function's.
            unsafe { store4(groups2(a, la, c, lc), groups2(b, lb, d, ld), o.add(k)) };
            k += 4;
        }
        if seps != 0 {
            let n = seps.count_ones() as usize;
            let (a, la) = next(&mut seps, &mut f);
            let (b, lb) = if seps != 0 {
                next(&mut seps, &mut f)
            } else {
                (a, la)
            };
            let (c, lc) = if seps != 0 {
                next(&mut seps, &mut f)
            } else {
                (b, lb)
            };
            // SAFETY: as the function's; the fourth slot written is one of the three spare.
            unsafe { store4(groups2(a, la, c, lc), groups2(b, lb, c, lc), o.add(k)) };
            k += n;
        }
        k
    }

    /// [`super::Run`] over 64-byte blocks.
    pub fn parse_run(text: &[u8], at: usize, vals: &mut Vec<u64>, spans: &mut Vec<Span>) -> usize {
        // SAFETY: `fast_run` hands this out only where the processor has AVX2 (and with it
        // SSSE3 and SSE4.1), BMI1, LZCNT and POPCNT.
        unsafe { run_blocks(text, at, vals, spans) }
    }

    #[target_feature(enable = "avx2,bmi1,lzcnt,popcnt")]
    unsafe fn run_blocks(
        text: &[u8],
        at: usize,
        vals: &mut Vec<u64>,
        spans: &mut Vec<Span>,
    ) -> usize {
        // The current line's start and first value; `base`, the block's start, is where a
        // field starts.
        let (mut line, mut first, mut base) = (at, vals.len(), at);
        // Each block needs 16 bytes past its 64 for the last field's load.
        while text.len().saturating_sub(base) >= 80 {
            // SAFETY: `base + 80 <= text.len()`.
            let p = unsafe { text.as_ptr().add(base) };
            let (colon, brk, digit) = unsafe { masks(p) };
            let seps = colon | brk;
            // Anything but a plain number: another character, an empty field (a separator
            // first or after another), a field of more than 16 bytes.
            let bad = !(digit | seps) | (seps & ((seps << 1) | 1)) | long_fields(seps);
            // Only the lines that end before the first such byte are taken.
            let upto = match bad {
                0 => seps,
                b => {
                    let ends = brk & ((1u64 << b.trailing_zeros()) - 1);
                    if ends == 0 {
                        break;
                    }
                    seps & (u64::MAX >> ends.leading_zeros())
                }
            };
            vals.reserve(32 + 3);
            let k0 = vals.len();
            // SAFETY: the block's fields are plain numbers up to `upto`; 35 slots are free
            // past `k0` and a block holds at most 32 fields.
            let k = unsafe { convert(p, upto, vals.as_mut_ptr().add(k0)) };
            unsafe { vals.set_len(k0 + k) };
            let mut ends = brk & upto;
            while ends != 0 {
                let e = ends.trailing_zeros() as usize;
                let fields = (upto & (u64::MAX >> (63 - e))).count_ones() as usize;
                spans.push(Span {
                    start: line as u32,
                    end: (base + e) as u32,
                    vals: first as u32,
                });
                (line, first) = (base + e + 1, k0 + fields);
                ends &= ends - 1;
            }
            if bad != 0 {
                return line;
            }
            base += 64 - upto.leading_zeros() as usize;
        }
        vals.truncate(first);
        line
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
    /// field of more than 16 digits) and lines that are not records (comments, communicators,
    /// empty lines).
    fn text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let field = prop_oneof![
            8 => "[0-9]{1,8}",
            3 => "[0-9]{9,16}",
            1 => "[0-9]{17,22}",
            1 => "",
            1 => "[0-9]{0,3}[a\r ][0-9]{0,3}",
        ];
        let record = prop::collection::vec(field, 1..40).prop_map(|f| f.join(":"));
        let line = prop_oneof![
            12 => record,
            1 => Just(String::new()),
            1 => "#[0-9a-z:]{0,30}",
            1 => "c:[0-9:]{0,30}",
        ];
        prop::collection::vec(line, 1..12).prop_map(|l| l.join("\n").into_bytes())
    }

    /// The lines, fields and number flag of `text` with the run parser `run`.
    fn records(text: &[u8], run: Run) -> (Vec<Span>, Vec<u64>, bool) {
        let (mut spans, mut vals) = (Vec::new(), Vec::new());
        let numbers = parse_records(text, run, &mut vals, &mut spans);
        (spans, vals, numbers)
    }

    proptest::proptest! {
        /// The fast run parser and the byte-by-byte one give the same lines and fields,
        /// wherever the text ends.
        #[test]
        fn fast_run_agrees(text in text(), cut in 1usize..2000) {
            let text = &text[..text.len().min(cut)];
            proptest::prop_assert_eq!(records(text, fast_run()), records(text, no_run));
        }
    }

    #[test]
    fn fast_run_reads_the_bench_record_shapes() {
        let line = b"2:236:1:236:1:645725:50000001:41:42000050:14160:42000059:9440";
        let long = [&line.repeat(3)[..], b"\n"].concat();
        let text = [&line[..], b"\n", &long, &long, &line[..], b"\n"].concat();
        let (mut spans, mut vals) = (Vec::new(), Vec::new());
        // The block parser takes at least the first two lines (it leaves the lines that reach
        // into the last 80 bytes) and stops at a line's start.
        let at = fast_run()(&text, 0, &mut vals, &mut spans);
        if cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("avx2") {
            assert!(spans.len() >= 2);
            assert_eq!(at, spans[spans.len() - 1].end as usize + 1);
            assert_eq!(vals.len(), [12 + 34, 12 + 68][spans.len() - 2]);
        }
        let (spans, vals, numbers) = records(&text, fast_run());
        assert!(numbers);
        let fields = [
            2, 236, 1, 236, 1, 645725, 50000001, 41, 42000050, 14160, 42000059, 9440,
        ];
        assert_eq!(vals[..12], fields);
        // A line of 186 bytes spans three blocks: the fields that cross a block's end are
        // read whole (`9440` and the `2` of the next copy join).
        assert_eq!(spans[1].start as usize, line.len() + 1);
        assert_eq!((spans[1].end - spans[1].start) as usize, 3 * line.len());
        assert_eq!((spans[2].vals - spans[1].vals, spans[1].vals), (34, 12));
        assert_eq!(vals[12 + 11], 94402);
        assert_eq!(vals[12..23], fields[..11]);
        assert_eq!(spans.len(), 4);
        assert_eq!(vals.len(), 12 + 34 + 34 + 12);
    }
}
