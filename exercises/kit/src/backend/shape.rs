//! Out-of-bounds messages in the student's terms: how far past a buffer an
//! access lands, said plainly, and for a buffer that holds an image or a
//! matrix row after row ([`crate::DeviceBuffer::with_2d_shape`]) the row and
//! column its index stands for, with a hint for 2-D indices.

/// A buffer of `height` rows of `width` elements of `element_bytes` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape2d {
    pub width: usize,
    pub height: usize,
    pub element_bytes: usize,
}

fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

/// "reads 4 bytes just past the end of", "writes 4 bytes 8 bytes past the end
/// of", "reads 4 bytes just before the start of": `distance` as the simulator
/// counts it (after the end: bytes from the end to the access, 0 the first
/// byte past it; before the start: bytes from the access to the start).
pub fn how_far(verb: &str, size: u32, distance: u64, before: bool) -> String {
    let size = size as u64;
    match (before, distance) {
        (false, 0) => format!("{verb} {} just past the end of", bytes(size)),
        (false, d) => format!("{verb} {} {} past the end of", bytes(size), bytes(d)),
        (true, d) if d == size => format!("{verb} {} just before the start of", bytes(size)),
        (true, d) => format!("{verb} {} {} before the start of", bytes(size), bytes(d)),
    }
}

/// The element an access `distance` bytes past the end (or before the start)
/// of a buffer of `shape` reads: negative before the start.
pub fn element_index(shape: &Shape2d, distance: u64, before: bool) -> i64 {
    let e = shape.element_bytes.max(1) as i64;
    if before {
        -(distance as i64 + e - 1) / e
    } else {
        (shape.width * shape.height) as i64 + distance as i64 / e
    }
}

fn rows(n: i64) -> String {
    if n == 1 {
        "a row".into()
    } else {
        format!("{n} rows")
    }
}

/// "`in[2400]` stands for row 60, column 0 of `in` (40 columns by 60 rows),
/// a row below its last (rows 0 .. 59); at the same address, row 59, column
/// 40, right of its last column (columns 0 .. 39)": where element `index`
/// (out of bounds) falls in an image of `shape`, read both ways when a column
/// just past one side of the image is as likely as a row past its end.
pub fn place(name: &str, shape: &Shape2d, index: i64) -> String {
    let (w, h) = (shape.width.max(1) as i64, shape.height as i64);
    let (row, col) = (index.div_euclid(w), index.rem_euclid(w));
    let count = |n: i64, what: &str| if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") };
    let size = format!("{} by {}", count(w, "column"), count(h, "row"));
    let mut text = if row >= h {
        format!(
            "`{name}[{index}]` stands for row {row}, column {col} of `{name}` ({size}), {} below its last (rows 0 .. {})",
            rows(row - h + 1),
            h - 1
        )
    } else {
        format!(
            "`{name}[{index}]` stands for row {row}, column {col} of `{name}` ({size}), {} above its first (rows 0 .. {})",
            rows(-row),
            h - 1
        )
    };
    // Column `w + col` of the row before (a column test `x <= width`), or
    // column `col - w` of the row after (`x >= -1`): the same address.
    if row >= h && col < (w + 1) / 2 {
        text += &format!(
            "; at the same address, row {}, column {}, right of its last column (columns 0 .. {})",
            row - 1,
            w + col,
            w - 1
        );
    } else if row < 0 && col >= w / 2 {
        text += &format!(
            "; at the same address, row {}, column {}, left of its first column (columns 0 .. {})",
            row + 1,
            col - w,
            w - 1
        );
    }
    text
}

/// What to change, for a load of a 2-D kernel out of bounds.
pub const READ_HINT_2D: &str = "a 2-D index needs both of its tests before the load: \
    `if (x >= 0 && x < width && y >= 0 && y < height)` with x the column and y the row (`x <= width` or \
    `y <= height` lets one column or row too many through); a cell outside the image, such as a ghost cell of a \
    halo, counts 0 and is not read";

/// What to change, for a store of a 2-D kernel out of bounds.
pub const WRITE_HINT_2D: &str = "test both the column and the row before the store: \
    `if (col < width && row < height)` (a block on the right or bottom edge has threads outside the image)";

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGE: Shape2d = Shape2d { width: 40, height: 60, element_bytes: 4 };

    #[test]
    fn distances_read_as_words() {
        assert_eq!(how_far("reads", 4, 0, false), "reads 4 bytes just past the end of");
        assert_eq!(how_far("reads", 4, 8, false), "reads 4 bytes 8 bytes past the end of");
        assert_eq!(how_far("writes", 1, 1, true), "writes 1 byte just before the start of");
        assert_eq!(how_far("reads", 4, 8, true), "reads 4 bytes 8 bytes before the start of");
    }

    #[test]
    fn an_index_past_the_image_is_named_by_row_and_column() {
        // `x <= width` on the last row, or `y <= height` at column 0: the same address.
        let i = element_index(&IMAGE, 0, false);
        assert_eq!(i, 2400);
        let text = place("in", &IMAGE, i);
        assert!(text.contains("row 60, column 0") && text.contains("a row below its last (rows 0 .. 59)"), "{text}");
        assert!(text.contains("row 59, column 40, right of its last column (columns 0 .. 39)"), "{text}");
        // Far along the row past the end: a row, not a column.
        let text = place("in", &IMAGE, element_index(&IMAGE, 4 * 30, false));
        assert!(text.contains("row 60, column 30") && !text.contains("same address"), "{text}");
        // in[-1]: row -1, column 39, or row 0, column -1.
        let i = element_index(&IMAGE, 4, true);
        assert_eq!(i, -1);
        let text = place("in", &IMAGE, i);
        assert!(text.contains("row -1, column 39") && text.contains("row 0, column -1, left of its first"), "{text}");
        let text = place("in", &IMAGE, -3 * 40);
        assert!(text.contains("row -3, column 0") && text.contains("3 rows above its first"), "{text}");
    }
}
