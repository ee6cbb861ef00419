//! A minimal text table: first column left-aligned, the rest right-aligned.

pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|s| (*s).to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self) -> String {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, row: &[String]| {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                if i > 0 {
                    text.push_str("  ");
                }
                let pad = width - cell.chars().count();
                if i == 0 {
                    text.push_str(cell);
                    text.extend(std::iter::repeat_n(' ', pad));
                } else {
                    text.extend(std::iter::repeat_n(' ', pad));
                    text.push_str(cell);
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&mut out, &self.header);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&mut out, &rule);
        for row in &self.rows {
            line(&mut out, row);
        }
        out
    }
}

pub(crate) fn f3(x: f64) -> String {
    format!("{x:.3}")
}

pub(crate) fn opt3(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), f3)
}

pub(crate) fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub(crate) fn opt_ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", "value"]);
        t.row(vec!["a".into(), "1.000".into()]);
        t.row(vec!["longer".into(), "2".into()]);
        assert_eq!(
            t.render(),
            "name    value\n------  -----\na       1.000\nlonger      2\n"
        );
    }
}
