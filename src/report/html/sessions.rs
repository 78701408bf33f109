//! The page's parts about sessions: the sessions charted request by
//! request, and the table of every session under the compared config.

use super::*;

impl Page<'_> {
    pub(super) fn session_sections(&self, h: &mut String) -> Result<()> {
        let d = self.data;
        let base = d.baseline()?;
        let chosen = escape_html(&d.name(self.chosen));
        h.push_str("<section id=\"sessions\">\n<h2>Sessions up close</h2>\n");
        if let Some(note) = super::super::select::kept_note(d, self.chosen) {
            let _ = writeln!(h, "<p class=\"kept\">{}</p>", escape_html(&note));
        }
        let _ = writeln!(
            h,
            "<p>{} replayed request by request: by default the ones whose tokens sent changed most between \
             {} and {chosen} (<code>report --session LABEL</code> picks others).</p>",
            plural(self.sessions.len(), "session"),
            escape_html(&d.baseline_name())
        );
        let columns: Vec<Vec<Vec<f64>>> = KEY_FIGURES
            .iter()
            .map(|&figure| d.per_session(figure))
            .collect::<Result<_>>()?;
        let requests = d.per_session(figures::Metric::Requests)?;
        for section in self.sessions {
            let s = section.session;
            let info = &d.sessions[s];
            let _ = write!(
                h,
                "<section class=\"session\">\n<h3>{}</h3>\n<p><code>{}</code>: {} requests, {:.1} MB of transcript.</p>\n",
                escape_html(&info.label),
                escape_html(&info.path.display().to_string()),
                count(requests[s][base]),
                info.bytes as f64 / 1e6
            );
            let _ = write!(
                h,
                "<div class=\"scroll\"><table>\n<thead><tr><th class=\"l\">this session</th><th>{}</th>\
                 <th>{chosen}</th><th>change</th></tr></thead>\n<tbody>\n",
                escape_html(&d.baseline_name())
            );
            for (&figure, values) in KEY_FIGURES.iter().zip(&columns) {
                let (heading, fmt) = (figure.label(), figure.unit().format());
                let (b, c) = (values[s][base], values[s][self.chosen]);
                let _ = writeln!(
                    h,
                    "<tr><td class=\"l\">{heading}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape_html(&fmt(b)),
                    escape_html(&fmt(c)),
                    change_html(c, b)
                );
            }
            h.push_str("</tbody></table></div>\n");
            match &section.figure {
                Ok(f) => figure(h, f),
                Err(why) => {
                    let _ = writeln!(
                        h,
                        "<p class=\"warning\">No context curve: {}</p>",
                        escape_html(&why.0)
                    );
                }
            }
            h.push_str("</section>\n");
        }
        h.push_str("</section>\n");
        Ok(())
    }

    pub(super) fn all_sessions(&self, h: &mut String) -> Result<()> {
        let d = self.data;
        let base = d.baseline()?;
        let sent = d.per_session(figures::Metric::TokensSent)?;
        let lost = d.per_session(self.loss.figure())?;
        let requests = d.per_session(figures::Metric::Requests)?;
        let loss = escape_html(self.loss.short());
        let (b, c) = (
            escape_html(&d.baseline_name()),
            escape_html(&d.name(self.chosen)),
        );
        let _ = write!(
            h,
            "<section id=\"all-sessions\">\n<h2>Every session</h2>\n<div class=\"scroll\"><table>\n<thead><tr>\
             <th class=\"l\">session</th><th>requests</th><th>transcript</th><th>bad lines</th><th>tokens sent, {b}</th>\
             <th>tokens sent, {c}</th><th>change</th><th>{loss}, {b}</th><th>{loss}, {c}</th></tr></thead>\n<tbody>\n",
        );
        for (s, info) in d.sessions.iter().enumerate().take(MAX_SESSION_ROWS) {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\" title=\"{}\">{}</td><td>{}</td><td>{:.2} MB</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                escape_html(&info.path.display().to_string()),
                escape_html(&info.label),
                count(requests[s][base]),
                info.bytes as f64 / 1e6,
                info.lines_skipped,
                tokens(sent[s][base]),
                tokens(sent[s][self.chosen]),
                change_html(sent[s][self.chosen], sent[s][base]),
                count(lost[s][base]),
                count(lost[s][self.chosen]),
            );
        }
        h.push_str("</tbody></table></div>\n");
        if d.sessions.len() > MAX_SESSION_ROWS {
            let _ = writeln!(
                h,
                "<p>{} more sessions; <code>{}</code> has every one.</p>",
                d.sessions.len() - MAX_SESSION_ROWS,
                SESSIONS_FILE.replace("parquet", "csv")
            );
        }
        h.push_str("</section>\n");
        Ok(())
    }
}
