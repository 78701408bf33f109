//! Output that fits the terminal it is printed on. A table wider than the
//! terminal keeps the columns that matter first and hides the rest from the
//! right (the global `--wide` shows them all), saying so in a line under it;
//! prose longer than a line is wrapped at spaces. When stdout is not a
//! terminal nothing changes: scripts, files and pipes get every column and
//! every line as it was built.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Row, Width};

/// Set by the global `--wide`: tables keep every column on a terminal too.
static WIDE: AtomicBool = AtomicBool::new(false);

/// Lets every table be as wide as its columns (`--wide`), or fits them
/// again.
pub(crate) fn set_wide(wide: bool) {
    WIDE.store(wide, Ordering::Relaxed);
}

/// The width of the terminal stdout writes to; `None` when stdout is a
/// file or a pipe, whose readers get the whole lines. `COLUMNS` is not read:
/// it would change piped output, and a terminal reports its own size.
pub(crate) fn terminal_width() -> Option<usize> {
    if !io::stdout().is_terminal() {
        return None;
    }
    // comfy-table asks the terminal (the window size of stdout's tty).
    comfy_table::Table::new().width().map(usize::from)
}

/// The width tables are fitted to: the terminal's, unless `--wide`.
fn table_width() -> Option<usize> {
    if WIDE.load(Ordering::Relaxed) {
        None
    } else {
        terminal_width()
    }
}

/// How a column of text gives way when the table is wider than the
/// terminal, before columns are hidden. A column holding a word longer
/// than [`LONG_WORD`] (an id, a path) is cut in the middle unless it says
/// otherwise; figures never give way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Give {
    /// Cut in the middle, `…` for what was left out: ids and paths, whose
    /// start and end tell them apart.
    Middle,
    /// Cut at the end, `…` for what was left out: prose, such as a first
    /// prompt.
    End,
    /// Wrapped at its spaces: a few short words, such as marks.
    Wrap,
}

/// A word this long in a column's cells makes it an id or a path column,
/// cut in the middle to fit.
const LONG_WORD: usize = 24;
/// The least width a column that is cut to fit keeps: enough of an id's
/// start and end to tell it apart, and to type it back (`transcript show`
/// takes an id with `…` in it).
const CUT_WIDTH: usize = 20;

/// A terminal table that prints fitted to the terminal: every table the
/// commands print is one (built by [`crate::format::table`]), so a new one
/// fits too. It is a comfy-table [`comfy_table::Table`] for building.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    table: comfy_table::Table,
    /// Column indices, the first to keep first; columns it leaves out
    /// follow in their order.
    priority: Vec<usize>,
    /// How columns of text give way, where not by the rule of [`Give`].
    give: Vec<(usize, Give)>,
}

impl Table {
    pub(crate) fn new(table: comfy_table::Table) -> Self {
        Table {
            table,
            priority: Vec::new(),
            give: Vec::new(),
        }
    }

    /// Which columns stay when not all fit: `order` names column indices,
    /// the one to keep longest first; the others are dropped before them,
    /// from the right.
    pub(crate) fn priority(&mut self, order: impl IntoIterator<Item = usize>) -> &mut Self {
        self.priority = order.into_iter().collect();
        self
    }

    /// How column `column` gives way to fit (see [`Give`]).
    pub(crate) fn give(&mut self, column: usize, how: Give) -> &mut Self {
        self.give.retain(|(c, _)| *c != column);
        self.give.push((column, how));
        self
    }

    /// How each column gives way: as set, else cut in the middle when it
    /// holds a long word, else not at all.
    fn gives(&self, n: usize) -> Vec<Option<Give>> {
        let words = data_widths(&self.table, n, true);
        (0..n)
            .map(|i| {
                self.give
                    .iter()
                    .find(|(c, _)| *c == i)
                    .map(|&(_, how)| how)
                    .or((words[i] > LONG_WORD).then_some(Give::Middle))
            })
            .collect()
    }

    /// The table fitted to `width` characters, with the line that says
    /// what is hidden or cut when something is; as printed when every
    /// column fits.
    pub(crate) fn fitted(&self, width: usize) -> String {
        let headers = header_texts(&self.table);
        let gives = self.gives(headers.len());
        let Some(layout) = layout(&self.table, &self.priority, &gives, width) else {
            return self.table.to_string();
        };
        let natural = natural_widths(&self.table);
        let cuts: Vec<Option<(Give, usize)>> = (0..headers.len())
            .map(|i| match gives[i] {
                Some(how @ (Give::Middle | Give::End))
                    if layout.kept[i] && layout.widths[i] < natural[i] =>
                {
                    Some((how, layout.widths[i]))
                }
                _ => None,
            })
            .collect();
        let mut table = if cuts.iter().any(Option::is_some) {
            self.cut(&cuts)
        } else {
            self.table.clone()
        };
        let mut header = Row::new();
        for (i, text) in headers.iter().enumerate() {
            if layout.kept[i] {
                header.add_cell(Cell::new(wrap_header(text, layout.widths[i])));
            } else {
                header.add_cell(Cell::new(text));
            }
        }
        if table.header().is_some() {
            table.set_header(header);
        }
        // Each kept column at its width: a value wider wraps at its spaces.
        for (i, column) in table.column_iter_mut().enumerate() {
            column.set_constraint(if layout.kept[i] {
                // comfy-table's absolute width counts the padding.
                let with_padding = layout.widths[i] + usize::from(column.padding_width());
                let fixed = u16::try_from(with_padding).unwrap_or(u16::MAX);
                ColumnConstraint::Absolute(Width::Fixed(fixed))
            } else {
                ColumnConstraint::Hidden
            });
        }
        table.set_content_arrangement(ContentArrangement::Dynamic);
        table.set_width(u16::try_from(width).unwrap_or(u16::MAX));
        let name = |i: usize| headers[i].split_whitespace().collect::<Vec<_>>().join(" ");
        // An empty column hidden hides nothing: it is not counted.
        let empty = empty_columns(&self.table, headers.len());
        let hidden: Vec<String> = (0..headers.len())
            .filter(|&i| !layout.kept[i] && !empty[i])
            .map(name)
            .collect();
        let shown_or_full = (0..headers.len())
            .filter(|&i| layout.kept[i] || !empty[i])
            .count();
        let cut: Vec<String> = (0..headers.len())
            .filter(|&i| cuts[i].is_some())
            .map(name)
            .collect();
        match fitted_note(&hidden, &cut, shown_or_full) {
            Some(note) => format!("{table}\n{}", wrap_line(&note, width)),
            None => table.to_string(),
        }
    }

    /// The table with the cells of each column `cuts` names cut to its
    /// width; every other cell as it was (with its alignment: comfy-table
    /// cells cannot be changed in place, so the table is built anew).
    fn cut(&self, cuts: &[Option<(Give, usize)>]) -> comfy_table::Table {
        let mut table = comfy_table::Table::new();
        table.load_preset(&self.table.clone().current_style_as_preset());
        if let Some(header) = self.table.header() {
            table.set_header(header.clone());
        }
        for row in self.table.row_iter() {
            let mut cells = Row::new();
            for (i, cell) in row.cell_iter().enumerate() {
                match cuts.get(i).copied().flatten() {
                    Some((how, width)) if text_width(&cell.content()) > width => {
                        let lines: Vec<String> = cell
                            .content()
                            .lines()
                            .map(|l| shorten(l, width, how))
                            .collect();
                        cells.add_cell(Cell::new(lines.join("\n")))
                    }
                    _ => cells.add_cell(cell.clone()),
                };
            }
            table.add_row(cells);
        }
        table
    }
}

/// How many columns a character takes on a terminal: two for the wide
/// scripts (CJK, Hangul, full-width forms) and emoji, one for the rest.
fn char_width(c: char) -> usize {
    let wide = matches!(u32::from(c),
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD);
    if wide {
        2
    } else {
        1
    }
}

/// The widest line of `text`, in terminal columns.
fn text_width(text: &str) -> usize {
    text.lines()
        .map(|l| l.chars().map(char_width).sum())
        .max()
        .unwrap_or(0)
}

/// `line` in at most `width` columns: whole if it fits, else with `…`
/// for what was left out, in its middle or at its end.
pub(crate) fn shorten(line: &str, width: usize, how: Give) -> String {
    if text_width(line) <= width {
        return line.to_string();
    }
    let room = width.saturating_sub(1);
    let take = |chars: &mut dyn Iterator<Item = char>, room: usize| -> String {
        let mut used = 0;
        chars
            .take_while(|&c| {
                used += char_width(c);
                used <= room
            })
            .collect()
    };
    match how {
        Give::Middle => {
            // The end tells ids of one session apart (a subagent's suffix):
            // it keeps the larger half.
            let head = take(&mut line.chars(), room / 2);
            let tail: String = take(&mut line.chars().rev(), room - text_width(&head))
                .chars()
                .rev()
                .collect();
            format!("{head}…{tail}")
        }
        Give::End | Give::Wrap => format!("{}…", take(&mut line.chars(), room)),
    }
}

impl Deref for Table {
    type Target = comfy_table::Table;

    fn deref(&self) -> &Self::Target {
        &self.table
    }
}

impl DerefMut for Table {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.table
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match table_width() {
            Some(width) => f.write_str(&self.fitted(width)),
            None => self.table.fmt(f),
        }
    }
}

/// The line under a fitted table: which columns are hidden (by their
/// headers; a column without one as "unnamed"), which are cut short, and
/// that `--wide` shows them whole. `None` when nothing is.
fn fitted_note(hidden: &[String], cut: &[String], columns: usize) -> Option<String> {
    let names = |list: &[String]| -> String {
        list.iter()
            .map(|h| if h.is_empty() { "unnamed" } else { h.as_str() })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cut_part = format!("{} cut short (…)", names(cut));
    match (hidden.is_empty(), cut.is_empty()) {
        (true, true) => None,
        (true, false) => Some(format!(
            "{cut_part} to fit the terminal; --wide shows them whole"
        )),
        (false, cut_none) => Some(format!(
            "{} of {columns} columns hidden to fit the terminal: {}{}; --wide shows them",
            hidden.len(),
            names(hidden),
            if cut_none {
                String::new()
            } else {
                format!("; {cut_part}")
            }
        )),
    }
}

/// The columns a fitted table keeps and the width of each's content.
struct Layout {
    kept: Vec<bool>,
    widths: Vec<usize>,
}

/// Each header cell's text, one a column (empty where there is none).
fn header_texts(table: &comfy_table::Table) -> Vec<String> {
    let columns = table.column_iter().count();
    let mut texts: Vec<String> = table
        .header()
        .map(|h| h.cell_iter().map(Cell::content).collect())
        .unwrap_or_default();
    texts.resize(columns, String::new());
    texts
}

/// The columns that fit `width` and their widths, or `None` when the table
/// fits as it is. Data cells never wrap (a number split over lines misreads);
/// a header wraps between its words and after an underscore, so a column
/// is as narrow as its widest value or its longest piece of header.
/// Columns are dropped lowest priority first until the narrowest layout
/// fits; the room left widens the columns that matter first.
fn layout(
    table: &comfy_table::Table,
    priority: &[usize],
    gives: &[Option<Give>],
    width: usize,
) -> Option<Layout> {
    let headers = header_texts(table);
    let n = headers.len();
    let natural = natural_widths(table);
    let padding: Vec<usize> = table
        .column_iter()
        .map(|c| usize::from(c.padding_width()))
        .collect();
    // One border character left of every column and one at the right.
    let total = |widths: &[usize], kept: &[bool]| -> usize {
        1 + (0..n)
            .filter(|&i| kept[i])
            .map(|i| widths[i] + padding[i] + 1)
            .sum::<usize>()
    };
    let mut kept = vec![true; n];
    if n == 0 || total(&natural, &kept) <= width {
        return None;
    }
    let words = data_widths(table, n, true);
    // A column with nothing in it (no session has a name) goes first.
    let empty = empty_columns(table, n);
    for i in (0..n).filter(|&i| empty[i] && n > 1) {
        kept[i] = false;
    }
    let order = keep_order(priority, n);
    let piece: Vec<usize> = headers.iter().map(|h| longest_piece(h)).collect();
    // A column that gives way is as narrow as it gives: cut to a few
    // characters, or wrapped at its spaces.
    let least_of = |data: Vec<usize>| -> Vec<usize> {
        (0..n)
            .map(|i| {
                let data = match gives.get(i).copied().flatten() {
                    Some(Give::Middle | Give::End) => data[i].min(CUT_WIDTH),
                    Some(Give::Wrap) => words[i],
                    None => data[i],
                };
                data.max(piece[i]).max(1)
            })
            .collect()
    };
    let mut least = least_of(data_widths(table, n, false));
    // Columns go, lowest priority first, while the rest do not fit unbroken;
    // the two that matter most stay and wrap their values at spaces instead
    // (a label and its value say something; a label alone does not).
    let keep_at_least = n.min(2);
    for &i in order.iter().rev() {
        if total(&least, &kept) <= width || kept.iter().filter(|&&k| k).count() == keep_at_least {
            break;
        }
        kept[i] = false;
    }
    if total(&least, &kept) > width {
        least = least_of(data_widths(table, n, true));
        for &i in order.iter().rev() {
            if total(&least, &kept) <= width || kept.iter().filter(|&&k| k).count() == 1 {
                break;
            }
            kept[i] = false;
        }
    }
    let mut widths = least.clone();
    let mut room = width.saturating_sub(total(&least, &kept));
    for &i in order.iter().filter(|&&i| kept[i]) {
        let grow = natural[i].saturating_sub(widths[i]).min(room);
        widths[i] += grow;
        room -= grow;
    }
    Some(Layout { kept, widths })
}

/// Which columns have nothing but blanks in their data cells.
fn empty_columns(table: &comfy_table::Table, n: usize) -> Vec<bool> {
    let mut empty = vec![true; n];
    for row in table.row_iter() {
        for (i, cell) in row.cell_iter().enumerate().take(n) {
            if !cell.content().trim().is_empty() {
                empty[i] = false;
            }
        }
    }
    empty
}

/// The width of each column's widest cell, header included.
fn natural_widths(table: &comfy_table::Table) -> Vec<usize> {
    table
        .column_max_content_widths()
        .into_iter()
        .map(usize::from)
        .collect()
}

/// Column indices in the order to keep them: `priority`'s valid ones, then
/// the rest left to right.
fn keep_order(priority: &[usize], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for &i in priority.iter().chain(&(0..n).collect::<Vec<_>>()) {
        if i < n && !order.contains(&i) {
            order.push(i);
        }
    }
    order
}

/// The widest line of each column's data cells (with `words`, the longest
/// word), measured as comfy-table lays them out.
fn data_widths(table: &comfy_table::Table, n: usize, words: bool) -> Vec<usize> {
    let mut data = comfy_table::Table::new();
    for row in table.row_iter() {
        if words {
            let cells: Vec<String> = row
                .cell_iter()
                .map(|c| {
                    c.content()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .collect();
            data.add_row(cells);
        } else {
            data.add_row(row.clone());
        }
    }
    let mut widths: Vec<usize> = data
        .column_max_content_widths()
        .into_iter()
        .map(usize::from)
        .collect();
    widths.resize(n, 0);
    widths
}

/// A header's words, each split after its underscores: the pieces a
/// wrapped header keeps whole.
fn pieces(word: &str) -> Vec<&str> {
    word.split_inclusive('_').collect()
}

/// The longest piece of `header`, the least width it wraps to unbroken.
fn longest_piece(header: &str) -> usize {
    header
        .split_whitespace()
        .flat_map(pieces)
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(0)
}

/// `header` wrapped to `width`: words joined by spaces, a word longer than
/// the width broken after an underscore, and a piece longer still cut.
fn wrap_header(header: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    for given in header.lines() {
        let mut line = String::new();
        for word in given.split_whitespace() {
            let mut first = true;
            for piece in pieces(word) {
                let glue = if first && !line.is_empty() { " " } else { "" };
                first = false;
                let len = line.chars().count() + glue.len() + piece.chars().count();
                if !line.is_empty() && len > width {
                    lines.push(std::mem::take(&mut line));
                } else {
                    line.push_str(glue);
                }
                let mut piece: Vec<char> = piece.chars().collect();
                while piece.len() > width.max(1) && line.is_empty() {
                    lines.push(piece.drain(..width.max(1)).collect());
                }
                line.extend(piece);
            }
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// Whether `line` is a table's: tables are fitted themselves, and one
/// `--wide` lets be wider than the terminal is left as it is.
fn is_table_line(line: &str) -> bool {
    line.chars()
        .next()
        .is_some_and(|c| ('\u{2500}'..='\u{257f}').contains(&c))
}

/// `line` wrapped at spaces to `width`, its continuations indented two
/// more than it so they read as one item; a word longer than the width
/// stays whole on its own line.
pub(crate) fn wrap_line(line: &str, width: usize) -> String {
    if line.chars().count() <= width || is_table_line(line) {
        return line.to_string();
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let hanging = " ".repeat((indent + 2).min(width / 2));
    let mut out: Vec<String> = Vec::new();
    let mut current = " ".repeat(indent);
    let mut empty = true;
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        let len = current.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && len > width {
            out.push(std::mem::replace(&mut current, hanging.clone()));
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    out.push(current);
    out.join("\n")
}

/// A paragraph broken into `lines` where the text is read whole (piped),
/// and one line on a terminal, for [`Wrapping`] to wrap at its width
/// instead of breaking the lines a second time.
pub(crate) fn paragraph(lines: &[&str]) -> String {
    let glue = if terminal_width().is_some() {
        " "
    } else {
        "\n"
    };
    lines.join(glue)
}

/// A writer that wraps each line longer than the terminal (see
/// [`wrap_line`]) when stdout is one, and passes everything through
/// untouched otherwise.
pub(crate) struct Wrapping<W: Write> {
    inner: W,
    width: Option<usize>,
    line: Vec<u8>,
}

impl<W: Write> Wrapping<W> {
    /// `inner`, wrapped to the terminal's width if stdout is a terminal.
    pub(crate) fn new(inner: W) -> Self {
        Self::to_width(inner, terminal_width())
    }

    /// `inner`, wrapped to `width` (`None`: not at all).
    pub(crate) fn to_width(inner: W, width: Option<usize>) -> Self {
        Wrapping {
            inner,
            width,
            line: Vec::new(),
        }
    }

    /// Writes the line held so far (with its newline, if it has one),
    /// wrapped.
    fn write_line(&mut self, width: usize) -> io::Result<()> {
        let line = std::mem::take(&mut self.line);
        let (text, newline) = match line.strip_suffix(b"\n") {
            Some(text) => (text, true),
            None => (&line[..], false),
        };
        match std::str::from_utf8(text) {
            Ok(text) => self.inner.write_all(wrap_line(text, width).as_bytes())?,
            Err(_) => self.inner.write_all(text)?,
        }
        if newline {
            self.inner.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Wrapping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(width) = self.width else {
            return self.inner.write(buf);
        };
        for chunk in buf.split_inclusive(|&b| b == b'\n') {
            self.line.extend_from_slice(chunk);
            if chunk.ends_with(b"\n") {
                self.write_line(width)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(width) = self.width {
            if !self.line.is_empty() {
                self.write_line(width)?;
            }
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Wrapping<W> {
    fn drop(&mut self) {
        // A writer dropped without a flush still writes its last line; the
        // error, if any, has nowhere to go.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use comfy_table::CellAlignment;
    use std::path::Path;

    /// A comfy-table `Table` printed as it is would not fit: every table is
    /// built by `format::table`, whose tables fit.
    #[test]
    fn every_table_is_built_to_fit() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        for path in crate::fn_length::sources(&src) {
            let rel = path.strip_prefix(&src).unwrap();
            let own = [Path::new("screen.rs"), Path::new("format.rs")];
            if own.contains(&rel) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let imports = line.trim_start().starts_with("use comfy_table")
                    && line
                        .split(|c: char| !c.is_alphanumeric() && c != '_')
                        .any(|w| w == "Table");
                if imports || line.contains("comfy_table::Table") {
                    found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "build tables with format::table, which fit the terminal:\n{}",
            found.join("\n")
        );
    }

    fn wide_table() -> Table {
        let mut c = comfy_table::Table::new();
        c.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
        c.set_header(vec![
            "#",
            "config",
            "price_with_refetch",
            "Δ price_with_refetch",
            "tokens sent",
            "cache write",
            "still needed",
            "peak",
        ]);
        let mut t = Table::new(c);
        t.add_row(vec![
            "1",
            "120k 0.70/0.40 cap512 w3",
            "$18.53",
            "-5.5%",
            "11.46M",
            "908.2k",
            "39",
            "84.0k",
        ]);
        t.add_row(vec![
            "2",
            "120k 0.80/0.50 cap512 w3",
            "$19.62",
            "=",
            "13.06M",
            "1.10M",
            "30",
            "95.5k",
        ]);
        t
    }

    fn widest(text: &str) -> usize {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    /// A fitted table's text as the table and the note under it, the
    /// note's wrapped lines read as the one line they are.
    fn table_and_note(text: &str) -> (&str, String) {
        let (table, note) = text.rsplit_once('┘').expect("a table");
        let note = note.split_whitespace().collect::<Vec<_>>().join(" ");
        (table, note)
    }

    #[test]
    fn a_table_that_fits_prints_as_it_would_anywhere() {
        let t = wide_table();
        let whole = t.table.to_string();
        assert_eq!(t.fitted(widest(&whole)), whole);
        assert_eq!(t.fitted(500), whole);
    }

    #[test]
    fn a_wide_table_keeps_its_first_columns_and_says_what_is_hidden() {
        let t = wide_table();
        for width in [50, 60, 70, 80] {
            let text = t.fitted(width);
            assert!(widest(&text) <= width, "{width}:\n{text}");
            let (table, note) = table_and_note(&text);
            assert!(table.contains("120k 0.70/0.40 cap512 w3"), "{text}");
            assert!(note.contains("hidden") && note.contains("--wide"), "{note}");
            // The header breaks after an underscore, never inside a value;
            // the note names a hidden column by its whole header.
            assert!(table.contains("$18.53"), "{text}");
            assert!(!table.contains("price_with_refetch"), "{text}");
            assert_eq!(
                table.contains('Δ'),
                !note.contains("Δ price_with_refetch"),
                "{text}"
            );
        }
        let text = t.fitted(60);
        let (table, note) = table_and_note(&text);
        assert!(
            !table.contains("peak") && note.contains("peak"),
            "the last column goes first:\n{text}"
        );
    }

    #[test]
    fn a_label_and_its_value_stay_and_the_value_wraps() {
        let mut c = comfy_table::Table::new();
        c.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
        c.set_header(vec!["figure", "value"]);
        c.add_row(vec![
            "worst session",
            "cc-8463c716-a2ea (143 requests): +8.8%",
        ]);
        let text = Table::new(c).fitted(40);
        assert!(widest(&text) <= 40, "{text}");
        assert!(
            text.contains("cc-8463c716-a2ea") && text.contains("+8.8%"),
            "{text}"
        );
        assert!(!text.contains("hidden"), "{text}");
    }

    #[test]
    fn the_priority_decides_which_columns_stay() {
        let mut t = wide_table();
        t.priority([0, 1, 6, 2]);
        let text = t.fitted(60);
        assert!(widest(&text) <= 60, "{text}");
        assert!(text.contains("still") && text.contains("39"), "{text}");
        assert!(!text.contains("11.46M"), "{text}");
    }

    #[test]
    fn ids_are_cut_in_the_middle_so_the_figures_stay() {
        let mut c = comfy_table::Table::new();
        c.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
        c.set_header(vec![
            "id",
            "name",
            "first prompt",
            "messages",
            "est. tokens",
        ]);
        let mut t = Table::new(c);
        t.priority([0, 3, 4]).give(2, Give::End);
        for (id, prompt) in [
            (
                "cc-4d5611e5-241a-462a-8d15-5122611a9569-agent-acompact-e1f845-0a1b2c3d",
                "Your task is to create a detailed summary of the conversation so far",
            ),
            ("cc-short", "fix the tests"),
        ] {
            t.add_row(vec![
                Cell::new(id),
                Cell::new(""),
                Cell::new(prompt),
                Cell::new("1,234").set_alignment(CellAlignment::Right),
                Cell::new("146,285").set_alignment(CellAlignment::Right),
            ]);
        }
        let text = t.fitted(60);
        assert!(widest(&text) <= 60, "{text}");
        for kept in [
            "messages",
            "1,234",
            "146,285",
            "cc-4d5611e5",
            "0a1b2c3d",
            "cc-short",
        ] {
            assert!(text.contains(kept), "{kept}:\n{text}");
        }
        assert!(text.contains('…'), "{text}");
        // The empty name column goes unnamed; what was hidden or cut is said.
        let (_, note) = table_and_note(&text);
        assert!(
            !note.contains("name,") && !note.contains(": name"),
            "{note}"
        );
        assert!(note.contains("id cut short (…)"), "{note}");
        assert!(note.contains("--wide"), "{note}");
    }

    #[test]
    fn a_line_is_shortened_in_its_middle_or_at_its_end() {
        let id = "cc-4d5611e5-241a-462a-8d15-5122611a9569-agent-a2898e3";
        let cut = shorten(id, 21, Give::Middle);
        assert_eq!(cut, "cc-4d5611e…nt-a2898e3");
        assert_eq!(cut.chars().count(), 21);
        assert_eq!(
            shorten("fix the failing tests", 10, Give::End),
            "fix the f…"
        );
        assert_eq!(shorten("short", 10, Give::Middle), "short");
        // A wide character takes two columns.
        assert_eq!(text_width(&shorten("修复失败的测试用例", 7, Give::End)), 7);
    }

    #[test]
    fn the_note_names_every_hidden_column() {
        let text = wide_table().fitted(60);
        let (_, note) = table_and_note(&text);
        for hidden in ["peak", "still needed", "cache write"] {
            assert!(note.contains(hidden), "{hidden}: {note}");
        }
    }

    #[test]
    fn headers_wrap_between_words_and_after_underscores() {
        assert_eq!(
            wrap_header("Δ price_with_refetch 95% CI", 12),
            "Δ price_\nwith_refetch\n95% CI"
        );
        assert_eq!(wrap_header("tokens sent", 20), "tokens sent");
        assert_eq!(wrap_header("abcdefgh", 3), "abc\ndef\ngh");
        assert_eq!(longest_piece("Δ price_with_refetch"), 7);
    }

    #[test]
    fn long_lines_wrap_at_spaces_and_table_lines_do_not() {
        let line = "  one two three four five six seven";
        assert_eq!(
            wrap_line(line, 16),
            "  one two three\n    four five\n    six seven"
        );
        assert_eq!(wrap_line("short", 16), "short");
        let border = "┌".to_string() + &"─".repeat(30);
        assert_eq!(wrap_line(&border, 16), border);
    }

    #[test]
    fn the_writer_wraps_each_line_and_passes_through_without_a_width() {
        let text = "alpha beta gamma delta\nshort\nno newline at the end";
        let mut out = Vec::new();
        {
            let mut w = Wrapping::to_width(&mut out, Some(12));
            w.write_all(text.as_bytes()).unwrap();
            w.flush().unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "alpha beta\n  gamma\n  delta\nshort\nno newline\n  at the end"
        );
        let mut out = Vec::new();
        Wrapping::to_width(&mut out, None)
            .write_all(text.as_bytes())
            .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }
}
