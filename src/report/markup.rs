//! The HTML pieces the page and its sections share: escaped text, a configuration's table
//! cells and an SVG document inlined.

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

/// Strips an XML declaration so an SVG document can be inlined.
pub fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
