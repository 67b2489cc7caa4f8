//! The HTML pieces the page and its measured-runs section share: escaped text and a
//! configuration's table cells.

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A configuration as four table cells: nodes, cores, GHz, GPUs.
pub fn config_cells(c: &crate::model::Config) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        c.nodes,
        c.cores,
        c.freq.ghz(),
        c.gpus
    )
}
