//! A tiny valid PDF written by hand: one page per string, Helvetica text, and a
//! cross-reference table whose byte offsets are computed as the file is built.

/// A PDF whose page `i` shows `pages[i]` (ASCII without parentheses or backslashes).
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    // 1: catalog, 2: page tree, 3: font, then a page and its content stream per page.
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    for (i, text) in pages.iter().enumerate() {
        assert!(!text.contains(['(', ')', '\\']), "keep page text plain");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let stream = format!("BT /F1 18 Tf 72 700 Td ({text}) Tj ET");
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref_at = out.len();
    let mut xref = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        xref.push_str(&format!("{offset:010} 00000 n \n"));
    }
    xref.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n",
        objects.len() + 1
    ));
    out.extend_from_slice(xref.as_bytes());
    out
}

/// Whether `pdftotext` runs here; when not, one line on stderr says the test is skipped.
pub fn has_pdftotext(test: &str) -> bool {
    let found = std::process::Command::new("pdftotext")
        .arg("-v")
        .output()
        .is_ok();
    if !found {
        eprintln!("{test}: skipped, pdftotext is absent (scripts/install-prereqs.sh installs poppler-utils)");
    }
    found
}
