//! Connection strings fit for messages and logs: [`redacted`] masks every secret a PostgreSQL
//! connection string can carry, in both of libpq's forms, so that no start-up line, refusal or
//! error ever shows a datastore's password (the class of leak of SpiceDB's 2026 advisory on
//! datastore URIs in logs).

/// What a masked secret is shown as.
pub const MASK: &str = "***";

/// `conninfo` with every secret masked, for messages and logs.
///
/// - A URL (`scheme://…`, any scheme, any case): the password of its user information
///   (`postgres://user:secret@host/db` gives `postgres://user:***@host/db`; the user
///   information ends at the first `@`, as libpq reads it), and the value of every query
///   parameter whose name, percent-decoded and in any case, contains `pass` (`password`,
///   `sslpassword`, `passfile`).
/// - Anything else is read as libpq's key=value form (`host=h password=secret`): the value of
///   every keyword containing `pass`, in any case, quoted (`password='with spaces'`, with `\'`
///   escapes) or not, is masked. A value that never ends (an unterminated quote) is masked to
///   the end.
///
/// Everything else is kept as given, so the message still says which host and database.
pub fn redacted(conninfo: &str) -> String {
    match url_scheme_end(conninfo) {
        Some(end) => redact_url(conninfo, end),
        None => redact_keywords(conninfo),
    }
}

/// Whether a parameter or keyword name names a secret.
fn is_secret(name: &str) -> bool {
    percent_decoded(name).to_ascii_lowercase().contains("pass")
}

/// `s` with its `%XX` escapes decoded (others left as they are).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match (bytes.get(i), bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'%'), Some(h), Some(l)) => {
                std::str::from_utf8(&[*h, *l]).ok().and_then(|x| u8::from_str_radix(x, 16).ok())
            }
            _ => None,
        };
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.extend(bytes.get(i));
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the `scheme://` of a URL ends (after leading whitespace), if `s` is one.
fn url_scheme_end(s: &str) -> Option<usize> {
    let start = s.len() - s.trim_start().len();
    let at = s.find("://")?;
    let scheme = s.get(start..at)?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(at + 3)
}

fn redact_url(s: &str, scheme_end: usize) -> String {
    let (head, rest) = s.split_at(scheme_end);
    let mut out = String::with_capacity(s.len());
    out.push_str(head);
    // The user information ends at the first `@` (libpq's reading): everything after its first
    // `:` up to there is the password.
    let rest = match rest.split_once('@') {
        Some((creds, after)) => match creds.split_once(':') {
            Some((user, _)) => format!("{user}:{MASK}@{after}"),
            None => rest.to_string(),
        },
        None => rest.to_string(),
    };
    match rest.split_once('?') {
        Some((base, query)) => {
            out.push_str(base);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((name, _)) if is_secret(name) => format!("{name}={MASK}"),
                    _ => p.to_string(),
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(&rest),
    }
    out
}

fn redact_keywords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let spaces = rest.len() - rest.trim_start().len();
        let (ws, tail) = rest.split_at(spaces);
        out.push_str(ws);
        rest = tail;
        if rest.is_empty() {
            return out;
        }
        let end = rest.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(rest.len());
        let (keyword, tail) = rest.split_at(end);
        out.push_str(keyword);
        rest = tail;
        let after = rest.trim_start();
        let Some(value) = after.strip_prefix('=') else { continue };
        let value_start = value.len() - value.trim_start().len();
        // Everything from the keyword to its value, as given.
        let between = rest.len() - value.len() + value_start;
        let (gap, value) = rest.split_at(between);
        out.push_str(gap);
        let len = value_len(value);
        let (text, tail) = value.split_at(len);
        out.push_str(if is_secret(keyword) { MASK } else { text });
        rest = tail;
    }
}

/// The length of the key=value form's value at the start of `s`: quoted (up to the closing
/// quote, `\` escaping the next character; to the end when unterminated) or up to whitespace.
fn value_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    let quoted = s.starts_with('\'');
    if quoted {
        chars.next();
    }
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if quoted => return i + 1,
            c if !quoted && c.is_whitespace() => return i,
            _ => {}
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every secret form: none of the secrets is left, and what is not secret is kept.
    #[test]
    fn every_password_form_is_masked() {
        let cases = [
            ("postgres://u:secret@h/db", "postgres://u:***@h/db"),
            ("postgresql://u:s%40cr%3Aet@h:5432/db", "postgresql://u:***@h:5432/db"),
            ("postgres://u@h/db?password=secret", "postgres://u@h/db?password=***"),
            (
                "postgres://u@h/db?sslmode=require&password=secret&x=1",
                "postgres://u@h/db?sslmode=require&password=***&x=1",
            ),
            ("postgres://u@h/db?PassWord=secret", "postgres://u@h/db?PassWord=***"),
            ("postgres://u@h/db?pass%77ord=secret", "postgres://u@h/db?pass%77ord=***"),
            ("postgres://u@h/db?password=sec%26ret", "postgres://u@h/db?password=***"),
            ("postgres://u@h/db?sslpassword=secret&passfile=/p", "postgres://u@h/db?sslpassword=***&passfile=***"),
            ("postgres://u:secret@h/db?password=secret", "postgres://u:***@h/db?password=***"),
            // libpq's user information ends at the first `@`, wherever it is.
            ("postgres://h/db?password=sec@ret", "postgres://h/db?password=***"),
            ("  POSTGRES://u:secret@h/db", "  POSTGRES://u:***@h/db"),
            ("mysql://u:secret@h/db", "mysql://u:***@h/db"),
            ("host=h password=secret dbname=d", "host=h password=*** dbname=d"),
            ("host=h password = secret", "host=h password = ***"),
            ("host=h password='sec ret' user=u", "host=h password=*** user=u"),
            ("host=h password='sec\\' ret' user=u", "host=h password=*** user=u"),
            ("host=h password=sec\\ ret user=u", "host=h password=*** user=u"),
            ("host=h PASSWORD=secret", "host=h PASSWORD=***"),
            ("host=h sslpassword=secret passfile=/p", "host=h sslpassword=*** passfile=***"),
            ("host=h password='secret never ends", "host=h password=***"),
            ("password=secret", "password=***"),
        ];
        for (given, want) in cases {
            let got = redacted(given);
            assert_eq!(got, want, "{given}");
            assert!(!got.contains("secret") && !got.contains("sec"), "{given}: {got}");
        }
    }

    /// Options printed for debugging show the URL masked.
    #[test]
    fn the_options_debug_masks_the_url() {
        let shown = format!("{:?}", crate::PgOptions::new("postgres://u:secret@h/db?password=secret"));
        assert!(shown.contains("postgres://u:***@h/db?password=***") && !shown.contains("secret"), "{shown}");
    }

    #[test]
    fn a_string_without_secrets_is_kept_as_given() {
        for s in [
            "postgres://root@127.0.0.1:5432/test",
            "postgres://u@h/db?sslmode=disable&earshot_prefix=x_",
            "host=h dbname=d user=u",
            "/var/lib/earshot",
            "",
        ] {
            assert_eq!(redacted(s), s);
        }
    }
}
