//! The colon-separated unsigned integers of a Paraver record line (`1:3:1:3:1:1000:7259:1`).
//!
//! Byte by byte: a parser over 64-byte blocks (SSE2 masks of colons and digits, eight-digit
//! words converted with multiplications) gave the same values at the same speed on the
//! benchmark trace (49 ns a line either way), so the simple one stays.

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
}
