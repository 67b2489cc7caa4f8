//! The measured CSV: one run (or the mean of repeats) a row, as `fit --measured` and
//! `validate --measured` read it and `profile --measured-out` writes it. Columns are found by
//! their header names in any order; `nodes, cores, freq_hz, gpus, time_s` are required,
//! `energy_j` (or `gpu_energy_j`), `ranks` and `energy_scope` optional.

use crate::error::{InputError, InputResult};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::Path;

/// One row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRow {
    /// Nodes.
    #[serde(deserialize_with = "whole")]
    pub nodes: u32,
    /// Cores per node (the most on one node where ranks are uneven).
    #[serde(deserialize_with = "whole")]
    pub cores: u32,
    /// Core frequency, Hz.
    #[serde(serialize_with = "plain")]
    pub freq_hz: f64,
    /// GPUs per node.
    #[serde(deserialize_with = "whole")]
    pub gpus: u32,
    /// Wall time, s.
    #[serde(serialize_with = "plain")]
    pub time_s: f64,
    /// Energy in the row's scope, J.
    #[serde(default, serialize_with = "plain_opt")]
    pub energy_j: Option<f64>,
    /// GPU energy alone, J (a column read where there is no `energy_j`).
    #[serde(default, serialize_with = "plain_opt")]
    pub gpu_energy_j: Option<f64>,
    /// Total MPI ranks.
    #[serde(default, deserialize_with = "whole_opt")]
    pub ranks: Option<u32>,
    /// What `energy_j` covers: `node`, `cpu` or `gpu`.
    #[serde(default)]
    pub energy_scope: Option<String>,
    /// The requested GPU core clock of the run, MHz (absent: the top of the machine's
    /// `gpu_clocks_mhz`). Written as a last column where a row has one ([`to_csv`]).
    #[serde(default, skip_serializing)]
    pub gpu_clock_mhz: Option<f64>,
    /// The GPU memory clock of the run, MHz (absent: the machine's `gpu_memory_clock_mhz`).
    /// A clock law is per memory clock: [`memory_clock`] refuses a file at two.
    #[serde(default, skip_serializing)]
    pub gpu_mem_clock_mhz: Option<f64>,
}

/// The columns a file must have.
pub const REQUIRED: [&str; 5] = ["nodes", "cores", "freq_hz", "gpus", "time_s"];

/// The header [`to_csv`] writes: every column, in this order.
pub const MEASURED_HEADER: &str =
    "nodes,cores,freq_hz,gpus,time_s,energy_j,gpu_energy_j,ranks,energy_scope";

/// The header a file must have, in words.
pub const HEADER: &str = "columns nodes,cores,freq_hz,gpus,time_s[,energy_j|gpu_energy_j][,ranks]\
     [,energy_scope][,gpu_clock_mhz][,gpu_mem_clock_mhz]";

/// An error about a cell: `line N, column NAME`.
pub fn cell_error(path: &Path, line: u64, column: &str, expected: &str, got: &str) -> InputError {
    InputError::Key {
        file: path.to_path_buf(),
        key: format!("line {line}, column {column}"),
        expected: expected.into(),
        got: got.into(),
    }
}

impl MeasuredRow {
    /// The row's energy and the name of its column (`energy_j` first), when it has one.
    pub fn energy(&self) -> Option<(f64, &'static str)> {
        match (self.energy_j, self.gpu_energy_j) {
            (Some(e), _) => Some((e, "energy_j")),
            (None, Some(e)) => Some((e, "gpu_energy_j")),
            _ => None,
        }
    }

    /// Refuses a row with both `energy_j` and `gpu_energy_j`: read, one of them would be
    /// dropped without a word (energy_j was taken, and a GPU clock fit then asked for the
    /// gpu_energy_j the row has).
    fn one_energy(&self, path: &Path, line: u64) -> InputResult<()> {
        // gpu_energy_j is the GPUs' by its name: a scope cell naming another (node, cpu) read
        // it as node or CPU energy, and a fit then asked for the GPU energy it had.
        let scope = self.energy_scope.as_deref().map(str::trim).unwrap_or("");
        if self.energy_j.is_none()
            && self.gpu_energy_j.is_some()
            && !scope.is_empty()
            && !scope.eq_ignore_ascii_case("gpu")
        {
            return Err(cell_error(
                path,
                line,
                "energy_scope",
                "gpu or an empty cell beside gpu_energy_j (the GPUs' energy by its name); node \
                 or CPU energy goes in energy_j",
                scope,
            ));
        }
        let (Some(_), Some(gpu)) = (self.energy_j, self.gpu_energy_j) else {
            return Ok(());
        };
        Err(cell_error(
            path,
            line,
            "gpu_energy_j",
            "one energy a run: this row has energy_j too, and a run's energy is one measurement \
             in one scope; keep energy_j with energy_scope (node or cpu) for node power, or \
             gpu_energy_j (or energy_j with energy_scope gpu) for a GPU clock law or GPU \
             energy, in separate files",
            &crate::limits::shown(gpu),
        ))
    }

    /// Checks the row's ranges (line `line` of `path`): a frequency in Hz, a positive time up
    /// to a year, a positive energy, ranks from one a node to one a core.
    pub fn validate(&self, path: &Path, line: u64) -> InputResult<()> {
        let bad = |col: &str, expected: &str, v: f64| {
            Err(cell_error(
                path,
                line,
                col,
                expected,
                &crate::limits::shown(v),
            ))
        };
        if !(1e7..=1e11).contains(&self.freq_hz) {
            return bad(
                "freq_hz",
                "a frequency in Hz (2.1e9, not 2.1 or 2100)",
                self.freq_hz,
            );
        }
        use crate::limits::Reading;
        if let Err(expected) = Reading::RunTime.check(self.time_s) {
            return bad("time_s", &expected, self.time_s);
        }
        self.one_energy(path, line)?;
        if let Some((e, col)) = self.energy()
            && let Err(expected) = Reading::RunEnergy.check(e)
        {
            return bad(col, &expected, e);
        }
        if let Some((e, col)) = self.energy()
            && !crate::limits::plausible_node_power(e, self.time_s, self.nodes)
        {
            let expected = format!(
                "an energy whose power, {:.3e} W a node here, lies from {} to {} W a node \
                 (joules, not mJ or kJ; a counter that wrapped is no reading)",
                e / self.time_s / f64::from(self.nodes.max(1)),
                crate::limits::NODE_POWER_W.0,
                crate::limits::NODE_POWER_W.1
            );
            return bad(col, &expected, e);
        }
        if let Some(mhz) = self.gpu_clock_mhz {
            if self.gpus == 0 {
                return bad(
                    "gpu_clock_mhz",
                    "empty on a row without GPUs (gpus = 0)",
                    mhz,
                );
            }
            if !(50.0..=5000.0).contains(&mhz) {
                return bad(
                    "gpu_clock_mhz",
                    "a GPU core clock in MHz, 50 to 5000 (1305, not 1.305)",
                    mhz,
                );
            }
        }
        self.validate_memory_clock(path, line)?;
        if self.nodes == 0 || self.cores == 0 {
            let (col, v) = if self.nodes == 0 {
                ("nodes", self.nodes)
            } else {
                ("cores", self.cores)
            };
            return bad(col, "a whole number from 1", f64::from(v));
        }
        if let Some(r) = self.ranks {
            let most = u64::from(self.nodes) * u64::from(self.cores);
            if r < self.nodes || u64::from(r) > most {
                let expected = format!(
                    "total MPI ranks from {} (one a node) to {most} (nodes x cores, one a core; \
                     cores is the most ranks on one node)",
                    self.nodes
                );
                return bad("ranks", &expected, f64::from(r));
            }
        }
        Ok(())
    }
}

impl MeasuredRow {
    /// A memory clock only on a GPU row, in whole MHz as `gpu_memory_clock_mhz` takes it.
    fn validate_memory_clock(&self, path: &Path, line: u64) -> InputResult<()> {
        let Some(mhz) = self.gpu_mem_clock_mhz else {
            return Ok(());
        };
        let expected = if self.gpus == 0 {
            "empty on a row without GPUs (gpus = 0)"
        } else if !(50.0..=5000.0).contains(&mhz) {
            "a GPU memory clock in MHz, 50 to 5000 (3505, not 3.505)"
        } else if mhz.fract() != 0.0 {
            "a whole number of MHz, as the machine file's gpu_memory_clock_mhz"
        } else {
            return Ok(());
        };
        let got = crate::limits::shown(mhz);
        Err(cell_error(path, line, "gpu_mem_clock_mhz", expected, &got))
    }
}

/// The GPU memory clock a measured CSV file's rows name (`gpu_mem_clock_mhz`) and the first
/// line naming it; `None` where none does. Rows at two are refused naming both lines: a GPU
/// clock law holds at one memory clock (memory-bound kernels stop gaining at a low one).
pub fn memory_clock(path: &Path) -> InputResult<Option<(f64, u64)>> {
    let (file, _) = crate::input::open_regular(path)?;
    let reader = std::io::Read::take(std::io::BufReader::new(file), crate::input::MAX_TABLE_BYTES);
    let mut first: Option<(f64, u64)> = None;
    read_rows(path, reader, |row, line| {
        match (row.gpu_mem_clock_mhz, first) {
            (Some(m), Some((f, at))) if m != f => Err(cell_error(
                path,
                line,
                "gpu_mem_clock_mhz",
                &format!(
                    "the memory clock of the file's other runs, {f} MHz (line {at}): a GPU \
                     clock law holds at one memory clock; fit the runs at each in separate files"
                ),
                &crate::limits::shown(m),
            )),
            (Some(m), None) => {
                first = Some((m, line));
                Ok(())
            }
            _ => Ok(()),
        }
    })?;
    Ok(first)
}

/// What a file with an `energy_j` column but no `energy_scope` column is read as, in words:
/// its energy is the whole node's (the documented default), said once as a note. `None` where
/// the file names its scope or measured no `energy_j`.
pub fn default_scope_note(path: &Path) -> InputResult<Option<String>> {
    let (file, _) = crate::input::open_regular(path)?;
    let reader = std::io::Read::take(std::io::BufReader::new(file), crate::input::MAX_TABLE_BYTES);
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(reader);
    let head = rdr.headers().map_err(|e| csv_error(path, 1, &e))?;
    let has = |column: &str| head.iter().any(|h| h.eq_ignore_ascii_case(column));
    Ok((has("energy_j") && !has("energy_scope")).then(|| {
        format!(
            "{}: no energy_scope column: energy_j taken as the whole node's (energy_scope node); \
             add an energy_scope column (cpu, gpu) where it is not",
            path.display()
        )
    }))
}

/// A checked row and the line of its file it starts on (a quoted cell may span lines).
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredLine {
    /// The line number, from 1 (the header's).
    pub line: u64,
    /// The row.
    pub row: MeasuredRow,
}

/// The rows of a measured CSV file that repeat an earlier row in every value (a file joined
/// to itself, a run saved twice): how many, and the first three as (line, the earlier row's
/// line). Each row is kept as a hash, so memory stays small whatever the file's size.
pub fn repeated_rows(path: &Path) -> InputResult<(usize, Vec<(u64, u64)>)> {
    use std::hash::{Hash, Hasher};
    let (file, _) = crate::input::open_regular(path)?;
    let reader = std::io::Read::take(std::io::BufReader::new(file), crate::input::MAX_TABLE_BYTES);
    let mut seen = std::collections::HashMap::new();
    let (mut count, mut first) = (0, Vec::new());
    read_rows(path, reader, |row, line| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{row:?}").hash(&mut h);
        match seen.get(&h.finish()) {
            Some(&earlier) => {
                count += 1;
                if first.len() < 3 {
                    first.push((line, earlier));
                }
            }
            None => {
                seen.insert(h.finish(), line);
            }
        }
        Ok(())
    })?;
    Ok((count, first))
}

/// Every checked row of a measured CSV file, in file order, each with its line ([`read_rows`]
/// on the file; up to [`crate::input::MAX_TABLE_BYTES`]).
pub fn read_lines(path: &Path) -> InputResult<Vec<MeasuredLine>> {
    let (file, _) = crate::input::open_regular(path)?;
    let reader = std::io::Read::take(std::io::BufReader::new(file), crate::input::MAX_TABLE_BYTES);
    let mut lines = Vec::new();
    read_rows(path, reader, |row, line| {
        lines.push(MeasuredLine { line, row });
        Ok(())
    })?;
    Ok(lines)
}

/// Reads a measured CSV as a stream, one checked row at a time with its line number: the
/// header is found by name (case and spaces ignored), blank lines are skipped, a bad cell is
/// named by its line and column with what was expected and what was found.
pub fn read_rows(
    path: &Path,
    reader: impl std::io::Read,
    mut f: impl FnMut(MeasuredRow, u64) -> InputResult<()>,
) -> InputResult<()> {
    // Records end at `\n` alone: under csv's default CRLF terminator every line after a `\r\n`
    // is counted one short, and errors named the line above (the header for the first row).
    // A `\r` left at the end of a cell is trimmed with the other spaces.
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(Tail::new(reader));
    let headers = header(path, &mut rdr)?;
    let mut record = csv::StringRecord::new();
    loop {
        let line = rdr.position().line();
        match rdr.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(csv_error(path, line, &e)),
        }
        let line = first_line(&rdr, &record);
        // Cells are trimmed only where one needs it (`1, 72, 2.4e9`): trimming every record
        // costs half the reading time.
        if record.iter().any(|c| c.trim().len() != c.len()) {
            record.trim();
        }
        // A blank line of a CRLF file (`\r` alone).
        if record.len() == 1 && record[0].is_empty() {
            continue;
        }
        if record.len() != headers.len() {
            return Err(field_count_error(path, line, headers.len(), &record));
        }
        let row: MeasuredRow = record
            .deserialize(Some(&headers))
            .map_err(|e| row_error(path, line, &headers, &record, &e))?;
        row.validate(path, line)?;
        f(row, line)?;
    }
}

/// A reader that remembers how many bytes it gave and the last of them, so that the line a
/// record starts on can be told from where it ends.
struct Tail<R> {
    inner: R,
    given: u64,
    last: Option<u8>,
}

impl<R> Tail<R> {
    fn new(inner: R) -> Tail<R> {
        Tail {
            inner,
            given: 0,
            last: None,
        }
    }
}

impl<R: std::io::Read> std::io::Read for Tail<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.given += n as u64;
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }
}

/// The line `record` (just read) starts on. csv skips blank lines before a record and gives
/// the position where its read began, so a record after a blank line would be named by the
/// line above; the line is counted back from where the record ends instead: its end line, less
/// the line breaks inside its quoted cells, less its own terminator (none for a last record
/// without a line break at the end of the input).
fn first_line<R: std::io::Read>(rdr: &csv::Reader<Tail<R>>, record: &csv::StringRecord) -> u64 {
    let end = rdr.position();
    let inside: u64 = record
        .iter()
        .map(|c| c.bytes().filter(|&b| b == b'\n').count() as u64)
        .sum();
    let tail = rdr.get_ref();
    let at_end = end.byte() == tail.given;
    // A quote left open runs to the end of the input and takes its last line break with it.
    let runs_to_end = at_end && record.iter().next_back().is_some_and(|c| c.ends_with('\n'));
    let terminated = !at_end || (tail.last == Some(b'\n') && !runs_to_end);
    end.line()
        .saturating_sub(inside + u64::from(terminated))
        .max(1)
}

/// The header, lower-cased; refused without the required columns.
fn header<R: std::io::Read>(
    path: &Path,
    rdr: &mut csv::Reader<R>,
) -> InputResult<csv::StringRecord> {
    let raw = rdr.headers().map_err(|e| csv_error(path, 1, &e))?.clone();
    if raw.iter().all(str::is_empty) {
        return Err(cell_error(
            path,
            1,
            "header",
            "a header line",
            "an empty file",
        ));
    }
    let lower: csv::StringRecord = raw.iter().map(str::to_ascii_lowercase).collect();
    let got = raw.iter().collect::<Vec<_>>().join(",");
    if let Some(missing) = REQUIRED.iter().find(|c| !lower.iter().any(|h| h == **c)) {
        // `time` for `time_s`, `freq` for `freq_hz`: the column a user most likely meant.
        let alike = lower
            .iter()
            .find(|h| !is_known(h) && crate::input::looks_alike(h, missing))
            .map_or(String::new(), |h| {
                format!(" (is `{h}` meant to be `{missing}`? rename it)")
            });
        let expected = format!("{HEADER}: column `{missing}` is missing{alike}");
        return Err(cell_error(path, 1, "header", &expected, &got));
    }
    for (i, h) in lower.iter().enumerate() {
        if lower.iter().skip(i + 1).any(|o| o == h) {
            let expected = format!("{HEADER}, each column once: `{h}` is there twice");
            return Err(cell_error(path, 1, "header", &expected, &got));
        }
    }
    if let Some((column, meant, unit)) = misnamed_optional(&lower) {
        let expected = format!(
            "{HEADER}: `{column}` is no column the reader knows, and it looks like `{meant}` \
             ({unit}), which is absent: the reader would skip it and fit or score the runs \
             without it; rename it `{meant}` (in its unit) or remove it"
        );
        return Err(cell_error(path, 1, "header", &expected, &got));
    }
    rdr.set_headers(lower.clone());
    Ok(lower)
}

/// The optional columns, the stem an unknown column that means one of them starts with (its
/// name lower-cased, letters and digits only) and what the column holds.
const OPTIONAL: [(&str, &str, &str); 6] = [
    (
        "gpu_clock_mhz",
        "gpuclock",
        "the run's GPU core clock in MHz",
    ),
    ("gpu_energy_j", "gpuenergy", "the GPUs' energy in J"),
    (
        "gpu_mem_clock_mhz",
        "gpumem",
        "the run's GPU memory clock in MHz",
    ),
    ("energy_scope", "energyscope", "node, cpu or gpu"),
    ("energy_j", "energy", "the run's energy in J"),
    ("ranks", "ranks", "the run's total MPI ranks"),
];

/// An unknown column that names an absent optional one in another unit or spelling
/// (`gpu_clock_hz`, `GPU clock`, `energy_kwh`, `ranks_per_node`): skipped, it would change what
/// the runs mean without a word (three clocks' runs averaged as repeats of one). Returns the
/// column, the one it looks like and what that holds.
fn misnamed_optional(lower: &csv::StringRecord) -> Option<(&str, &'static str, &'static str)> {
    let squeezed = |h: &str| -> String { h.chars().filter(char::is_ascii_alphanumeric).collect() };
    OPTIONAL
        .iter()
        .filter(|(known, ..)| !lower.iter().any(|h| h == *known))
        .find_map(|&(known, stem, unit)| {
            lower
                .iter()
                .find(|h| !is_known(h) && squeezed(h).starts_with(stem))
                .map(|h| (h, known, unit))
        })
}

/// A row with more or fewer fields than the header, refused before any of its cells is read:
/// a stray comma or a split number (`1788,1730`) would shift every cell after it, and a short
/// row would leave its last columns empty.
fn field_count_error(
    path: &Path,
    line: u64,
    header: usize,
    record: &csv::StringRecord,
) -> InputError {
    let row = record.len();
    let why = if let Some(lines) = open_quote_lines(record) {
        format!(
            "a quote (`\"`) opened on this line is not closed before the next comma or line end, \
             so its cell takes in the next {}; close it, or remove it",
            crate::units::count(lines, "line", "lines")
        )
    } else if row > header {
        "a stray comma or a number split in two (`1788,1730` for `1788.1730`); quote a cell \
         that holds a comma"
            .to_string()
    } else {
        "a cell is missing: give every column a cell, empty (`,,`) where a value is optional"
            .to_string()
    };
    InputError::Syntax {
        file: path.to_path_buf(),
        format: "CSV",
        detail: format!("line {line} has {row} fields, the header {header}: {why}"),
    }
}

/// How many line breaks a row's quoted cells took in, where one did: no value of a measured
/// CSV holds a line break, so a cell that does was opened by a stray quote.
fn open_quote_lines(record: &csv::StringRecord) -> Option<u64> {
    let lines: usize = record.iter().map(|c| c.matches('\n').count()).sum();
    (lines > 0).then_some(lines as u64)
}

fn csv_error(path: &Path, line: u64, e: &csv::Error) -> InputError {
    match e.kind() {
        csv::ErrorKind::Io(io) => InputError::Read {
            file: path.to_path_buf(),
            reason: std::io::Error::new(io.kind(), format!("line {line}: {io}")),
        },
        csv::ErrorKind::Utf8 { .. } => {
            cell_error(path, line, "(any)", "UTF-8 text", "bytes that are not")
        }
        _ => cell_error(path, line, "(any)", "a CSV row", &e.to_string()),
    }
}

/// A cell that does not deserialize: its column by name, and what it holds.
fn row_error(
    path: &Path,
    line: u64,
    headers: &csv::StringRecord,
    record: &csv::StringRecord,
    e: &csv::Error,
) -> InputError {
    let csv::ErrorKind::Deserialize { err, .. } = e.kind() else {
        return csv_error(path, line, e);
    };
    // csv names the field of its own errors only: else the first cell its column refuses.
    let field = err
        .field()
        .map(|i| i as usize)
        .or_else(|| first_bad_cell(headers, record));
    let column = field.and_then(|i| headers.get(i)).unwrap_or("(any)");
    let raw = field.and_then(|i| record.get(i)).unwrap_or("");
    let expected = match kind(column) {
        Some((Cell::Whole, _)) => "a whole number",
        Some((Cell::Scope, _)) => "node, cpu or gpu",
        _ => "a non-negative number",
    };
    cell_error(path, line, column, expected, raw)
}

/// Whether `column` is one the reader knows.
fn is_known(column: &str) -> bool {
    kind(column).is_some()
}

/// What a column's cells hold.
enum Cell {
    /// A whole number >= 0.
    Whole,
    /// A number.
    Number,
    /// An energy scope's name.
    Scope,
}

/// The cells of a known column and whether they may be empty; `None` for other columns.
fn kind(column: &str) -> Option<(Cell, bool)> {
    Some(match column {
        "nodes" | "cores" | "gpus" => (Cell::Whole, false),
        "ranks" => (Cell::Whole, true),
        "freq_hz" | "time_s" => (Cell::Number, false),
        "energy_j" | "gpu_energy_j" | "gpu_clock_mhz" | "gpu_mem_clock_mhz" => (Cell::Number, true),
        "energy_scope" => (Cell::Scope, true),
        _ => return None,
    })
}

/// The first cell that its column's type refuses: a whole-number column holding a fraction
/// or a sign, a number column holding text.
fn first_bad_cell(headers: &csv::StringRecord, record: &csv::StringRecord) -> Option<usize> {
    headers.iter().enumerate().find_map(|(i, h)| {
        let cell = record.get(i).unwrap_or("");
        let number = cell.parse::<f64>().ok().filter(|v| v.is_finite());
        let ok = match kind(h) {
            Some((_, true)) if cell.is_empty() => true,
            Some((Cell::Whole, _)) => number.is_some_and(is_whole),
            Some((Cell::Number, _)) => number.is_some(),
            Some((Cell::Scope, _)) | None => true,
        };
        (!ok).then_some(i)
    })
}

fn is_whole(v: f64) -> bool {
    v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX)
}

/// A whole number >= 0, also written as `4.0`.
fn whole<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = f64::deserialize(d)?;
    if is_whole(v) {
        Ok(v as u32)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a whole number"
        )))
    }
}

fn whole_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        None => Ok(None),
        Some(v) if is_whole(v) => Ok(Some(v as u32)),
        Some(v) => Err(serde::de::Error::custom(format!(
            "{v} is not a whole number"
        ))),
    }
}

/// A number as Rust prints it (`2400000000`, `0.43`), not `2400000000.0`.
fn plain<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn plain_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// A row with its GPU clock, written last (`profile --gpu-clocks`).
#[derive(Serialize)]
struct Clocked<'a> {
    nodes: u32,
    cores: u32,
    #[serde(serialize_with = "plain")]
    freq_hz: f64,
    gpus: u32,
    #[serde(serialize_with = "plain")]
    time_s: f64,
    #[serde(serialize_with = "plain_opt")]
    energy_j: Option<f64>,
    #[serde(serialize_with = "plain_opt")]
    gpu_energy_j: Option<f64>,
    ranks: Option<u32>,
    energy_scope: Option<&'a str>,
    #[serde(serialize_with = "plain_opt")]
    gpu_clock_mhz: Option<f64>,
}

impl<'a> From<&'a MeasuredRow> for Clocked<'a> {
    fn from(r: &'a MeasuredRow) -> Self {
        Clocked {
            nodes: r.nodes,
            cores: r.cores,
            freq_hz: r.freq_hz,
            gpus: r.gpus,
            time_s: r.time_s,
            energy_j: r.energy_j,
            gpu_energy_j: r.gpu_energy_j,
            ranks: r.ranks,
            energy_scope: r.energy_scope.as_deref(),
            gpu_clock_mhz: r.gpu_clock_mhz,
        }
    }
}

/// Writes rows with the header, every column named (empty cells where a row has no value);
/// `gpu_clock_mhz` is a last column where a row has a clock.
pub fn to_csv(rows: &[MeasuredRow]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let clocked = rows.iter().any(|r| r.gpu_clock_mhz.is_some());
    for r in rows {
        if clocked {
            w.serialize(Clocked::from(r))?;
        } else {
            w.serialize(r)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(line, nodes)` of every row of `text`.
    fn lines(text: &[u8]) -> Vec<(u64, u32)> {
        let mut v = Vec::new();
        read_rows(Path::new("m.csv"), text, |r, line| {
            v.push((line, r.nodes));
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn each_row_is_named_by_the_line_it_starts_on_whatever_comes_before_it() {
        let plain = b"nodes,cores,freq_hz,gpus,time_s\n1,8,2e9,0,10\n2,8,2e9,0,6\n";
        assert_eq!(lines(plain), [(2, 1), (3, 2)]);
        let blank = b"nodes,cores,freq_hz,gpus,time_s\n\n1,8,2e9,0,10\n\n\n2,8,2e9,0,6";
        assert_eq!(
            lines(blank),
            [(3, 1), (6, 2)],
            "blank lines, no final line break"
        );
        let crlf = b"nodes,cores,freq_hz,gpus,time_s\r\n\r\n1,8,2e9,0,10\r\n2,8,2e9,0,6\r\n";
        assert_eq!(lines(crlf), [(3, 1), (4, 2)]);
        let quoted = b"\xef\xbb\xbf\"nodes\",\"cores\",freq_hz,gpus,time_s,note\n\
             1,8,2e9,0,10,\"two\nlines\"\n2,8,2e9,0,6,x\n";
        assert_eq!(
            lines(quoted),
            [(2, 1), (4, 2)],
            "a BOM, quoted header and cells"
        );
    }
}
