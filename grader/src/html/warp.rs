//! One warp's addresses for one load, drawn as the 32-byte sectors it touches:
//! the picture of coalescing the notes draw by hand.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use kit::profile::WarpSample;

use super::svg::{self, IDEAL, STUDENT};

/// Sectors drawn side by side before the gaps between them are folded.
const MAX_SPAN: u64 = 48;

/// The sectors the active lanes of `w` touch (address / 32).
pub fn sectors(w: &WarpSample) -> BTreeSet<u64> {
    let len = w.bytes.max(1) as u64;
    w.addresses.iter().flatten().flat_map(|&a| (a >> 5)..=((a + len - 1) >> 5)).collect()
}

pub fn chart(kernel: &str, w: &WarpSample) -> String {
    let touched = sectors(w);
    let (Some(&lo), Some(&hi)) = (touched.first(), touched.last()) else { return String::new() };
    // Contiguous when the span is small, otherwise only the touched sectors (gaps folded).
    let shown: Vec<u64> = if hi - lo < MAX_SPAN { (lo..=hi).collect() } else { touched.iter().copied().collect() };
    let folded = hi - lo >= MAX_SPAN;
    let sector_w = (800.0 / shown.len() as f64).clamp(6.0, 40.0);
    let lane_w = 800.0 / 32.0;
    let (left, lane_y, mem_y) = (20.0, 30.0, 150.0);
    let width = left * 2.0 + (sector_w * shown.len() as f64).max(lane_w * 32.0);
    let mut s = svg::svg_open(width, 230.0);
    let sector_x = |sec: u64| shown.iter().position(|&x| x == sec).map(|i| left + i as f64 * sector_w);
    let _ = write!(s, "<text x=\"{left}\" y=\"18\" class=\"lbl\">32 lanes of one warp</text>");
    for (lane, a) in w.addresses.iter().enumerate() {
        let x = left + lane as f64 * lane_w;
        let fill = if a.is_some() { "#c7d7f5" } else { "#eee" };
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{lane_y}\" width=\"{:.1}\" height=\"18\" fill=\"{fill}\" stroke=\"#777\"><title>lane {lane}{}</title></rect>",
            lane_w - 2.0,
            a.map(|a| format!(": byte {} from the first sector", a - lo * 32)).unwrap_or_else(|| " (inactive)".into())
        );
        if let Some(sx) = a.and_then(|a| sector_x(a >> 5)) {
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" y1=\"{}\" x2=\"{:.1}\" y2=\"{mem_y}\" stroke=\"#3a7bd5\" stroke-opacity=\"0.55\"/>",
                x + (lane_w - 2.0) / 2.0,
                lane_y + 18.0,
                sx + sector_w / 2.0
            );
        }
    }
    for (i, &sec) in shown.iter().enumerate() {
        let x = left + i as f64 * sector_w;
        let hit = touched.contains(&sec);
        let fill = if hit { STUDENT } else { "#f5f5f5" };
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{mem_y}\" width=\"{:.1}\" height=\"28\" fill=\"{fill}\" fill-opacity=\"0.8\" stroke=\"#555\"><title>sector {} (bytes {}..{})</title></rect>",
            sector_w - 1.0,
            sec - lo,
            (sec - lo) * 32,
            (sec - lo) * 32 + 31
        );
        if folded && i > 0 && shown[i - 1] + 1 != sec {
            let _ = write!(s, "<text x=\"{:.1}\" y=\"{}\" class=\"val\">&#8942;</text>", x - 3.0, mem_y - 4.0);
        }
    }
    let ideal = (32 * w.bytes.max(1)).div_ceil(32);
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"200\" class=\"lbl\">memory in 32-byte sectors{}: this warp touches {} sector(s); \
         {ideal} would hold all 32 lanes' {} bytes each</text>\
         <text x=\"{left}\" y=\"220\" class=\"val\" fill=\"{IDEAL}\">over the whole launch: {:.2} sectors per request</text>",
        if folded { " (untouched gaps folded)" } else { "" },
        touched.len(),
        w.bytes,
        w.sectors_per_request
    );
    s += "</svg>";
    let place = w.source.as_deref().map(|s| s.rsplit('/').next().unwrap_or(s).to_string());
    svg::figure(
        "warp",
        &format!(
            "{kernel}: `{}`{} — one warp's addresses and the sectors they touch",
            w.instruction,
            place.map(|p| format!(" at {p}")).unwrap_or_default()
        ),
        &s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(addrs: impl Fn(u64) -> u64) -> WarpSample {
        WarpSample {
            instruction: "ld.global.f32".into(),
            source: None,
            store: false,
            bytes: 4,
            addresses: (0..32).map(|l| Some(addrs(l))).collect(),
            sectors_per_request: 0.0,
        }
    }

    #[test]
    fn coalesced_touches_four_sectors_strided_thirty_two() {
        assert_eq!(sectors(&sample(|l| 4096 + 4 * l)).len(), 4);
        assert_eq!(sectors(&sample(|l| 4096 + 4 + 4 * l)).len(), 5, "misaligned by one word");
        assert_eq!(sectors(&sample(|l| 4096 + 128 * l)).len(), 32);
        let svg = chart("k", &sample(|l| 4096 + 4096 * l));
        assert!(svg.contains("touches 32 sector(s)") && svg.contains("gaps folded"), "{svg}");
    }
}
