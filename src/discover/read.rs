//! Reading a documentation file safely: only regular files are opened (checked before
//! opening, and again on the open descriptor, which is opened non-blocking so a FIFO
//! swapped in meanwhile cannot hang the read), with a byte budget, binary detection,
//! UTF-16 decoding by byte-order mark and lossy UTF-8 decoding. Every reader of file
//! bytes (build, status, passage reads) goes through [`read_text`], so they agree on the
//! text and its sha256.

use super::Warning;
use std::io::Read;
use std::path::Path;

/// A file's text as docfuse indexes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadText {
    pub text: String,
    /// sha256 of the bytes read (before decoding; after the byte budget's cut).
    pub sha256: String,
    /// The file was longer than the byte budget: `text` is its beginning.
    pub cut: bool,
    /// How the text is not exactly the file, when it is not: cut at the byte budget,
    /// decoded as Windows-1252 or lossily (the warnings' messages, `; `-joined).
    pub note: Option<String>,
}

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Opening or reading failed (permissions, vanished, I/O error).
    Unreadable(String),
    /// Not a regular file (FIFO, socket, device, folder).
    NotRegular(&'static str),
    /// Binary content (a NUL byte in the first 8 KiB that is not UTF-16 text).
    Binary(String),
    /// An API spec (by its name) that does not read as OpenAPI/Swagger, and why (found
    /// by the engine's reading of documents, which knows the kinds' rules).
    InvalidSpec(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Unreadable(e) => write!(f, "cannot read, skipped: {e}"),
            ReadError::NotRegular(kind) => write!(f, "not a regular file ({kind}), skipped"),
            ReadError::Binary(why) => write!(f, "{why}, skipped"),
            ReadError::InvalidSpec(why) => write!(f, "not readable as an API spec: {why}"),
        }
    }
}

/// The kind of a non-regular file type, for messages.
pub fn special_kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        return "a folder";
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    "not a regular file"
}

/// Opens `path` for reading only if it is a regular file (symbolic links followed).
/// On Unix the file is opened with `O_NONBLOCK`, so a FIFO put in its place between the
/// check and the open cannot block, and the descriptor's type is checked again.
///
/// # Errors
/// [`ReadError::NotRegular`] for anything but a regular file; [`ReadError::Unreadable`]
/// when it cannot be opened.
pub fn open_regular(path: &Path) -> Result<std::fs::File, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| ReadError::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(special_kind(meta.file_type())));
    }
    // swapped for a FIFO or device since the check: refused by the open itself
    crate::fsio::open_regular(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => ReadError::NotRegular("replaced while being opened"),
        _ => ReadError::Unreadable(e.to_string()),
    })
}

/// Reads `path` up to `max_bytes` (a longer file is cut within the budget at its last
/// line end, or at a character when that would keep less than half of it), refusing
/// binary content and special files, decoding UTF-16 (with a byte-order mark), a file
/// without any UTF-8 as Windows-1252, and other invalid UTF-8 lossily. Degradations
/// (cut, Windows-1252, lossy) are reported in `warnings` and in [`ReadText::note`]; a
/// refusal is returned as the error.
///
/// # Errors
/// [`ReadError`] saying why the file was not read.
pub fn read_checked(
    path: &Path,
    max_bytes: u64,
    warnings: &mut Vec<Warning>,
) -> Result<ReadText, ReadError> {
    let mut bytes = Vec::new();
    open_regular(path)?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Unreadable(e.to_string()))?;
    let mut notes: Vec<String> = Vec::new();
    let mut warn = |message: String| {
        notes.push(message.clone());
        warnings.push(Warning {
            path: path.to_path_buf(),
            message,
        })
    };
    let utf16 = utf16_order(&bytes);
    if utf16.is_none() && bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(ReadError::Binary(if looks_like_bomless_utf16(&bytes) {
            "looks like UTF-16 text without a byte-order mark (save it as UTF-8, or with a BOM)"
                .into()
        } else {
            "looks binary (NUL byte)".into()
        }));
    }
    let whole = bytes.len() as u64 <= max_bytes;
    if !whole {
        bytes.truncate(max_bytes as usize);
        let cut = budget_cut(&bytes, utf16);
        bytes.truncate(cut);
        warn(format!(
            "larger than the {max_bytes}-byte budget; indexed its first {cut} bytes"
        ));
    }
    let sha256 = crate::hashing::sha256_hex(&bytes);
    let (text, decoded) = decode(&bytes, utf16);
    match decoded {
        Decoded::Exact => {}
        Decoded::Legacy => warn(
            "not valid UTF-8 and no UTF-8 character in it; decoded as Windows-1252 (Latin-1)"
                .into(),
        ),
        Decoded::Lossy => warn(match utf16 {
            Some(_) if bytes.len() % 2 == 1 => {
                "UTF-16 with an odd number of bytes; decoded lossily".into()
            }
            Some(_) => "UTF-16 with unpaired surrogates; decoded lossily".into(),
            None => "not valid UTF-8; decoded lossily".into(),
        }),
    }
    Ok(ReadText {
        text,
        sha256,
        cut: !whole,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

/// [`read_checked`], with a refusal turned into a warning naming the file.
///
/// Returns `None` (with a warning) when the file is unreadable, special or binary.
pub fn read_text(path: &Path, max_bytes: u64, warnings: &mut Vec<Warning>) -> Option<ReadText> {
    match read_checked(path, max_bytes, warnings) {
        Ok(t) => Some(t),
        Err(e) => {
            warnings.push(Warning {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
            None
        }
    }
}

/// Byte order of a UTF-16 byte-order mark at the start: `Some(true)` little-endian.
fn utf16_order(bytes: &[u8]) -> Option<bool> {
    match bytes {
        [0xFF, 0xFE, ..] => Some(true),
        [0xFE, 0xFF, ..] => Some(false),
        _ => None,
    }
}

/// Text of mostly ASCII characters in UTF-16 has a NUL in every other byte.
fn looks_like_bomless_utf16(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192) & !1];
    if head.len() < 4 {
        return false;
    }
    let pairs = head.len() / 2;
    let (mut even, mut odd) = (0, 0);
    for p in head.chunks_exact(2) {
        even += usize::from(p[0] == 0);
        odd += usize::from(p[1] == 0);
    }
    even.max(odd) * 10 >= pairs * 9 && even.min(odd) * 10 <= pairs
}

/// Where to cut a prefix of a file longer than the budget: at its last line end, unless
/// that keeps less than half the prefix (a very long line, such as a minified or generated
/// file on one line), then at its last character boundary, so a file is never reduced to
/// its first lines when most of its budget is one line.
fn budget_cut(bytes: &[u8], utf16: Option<bool>) -> usize {
    let at_line = line_end_cut(bytes, utf16);
    if at_line * 2 >= bytes.len() {
        return at_line;
    }
    match utf16 {
        // before a UTF-8 sequence the budget cut in two
        None => {
            let n = bytes.len();
            let lead = (n.saturating_sub(4)..n)
                .rev()
                .find(|&i| bytes[i] & 0xC0 != 0x80);
            match lead {
                Some(i) => {
                    let len = match bytes[i] {
                        b if b >= 0xF0 => 4,
                        b if b >= 0xE0 => 3,
                        b if b >= 0xC0 => 2,
                        _ => 1,
                    };
                    if i + len <= n {
                        n
                    } else {
                        i
                    }
                }
                None => n,
            }
        }
        // whole code units, never the first half of a surrogate pair
        Some(le) => {
            let end = bytes.len() & !1;
            let high = |i: usize| {
                let u = if le {
                    u16::from_le_bytes([bytes[i], bytes[i + 1]])
                } else {
                    u16::from_be_bytes([bytes[i], bytes[i + 1]])
                };
                (0xD800..0xDC00).contains(&u)
            };
            if end >= 4 && high(end - 2) {
                end - 2
            } else {
                end
            }
        }
    }
}

/// Where to cut a prefix at its last line end (`\n`), for UTF-8 or UTF-16 text.
fn line_end_cut(bytes: &[u8], utf16: Option<bool>) -> usize {
    match utf16 {
        None => bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1),
        Some(le) => {
            let units = bytes.len() / 2;
            (1..units)
                .rev()
                .find(|&i| {
                    let u = &bytes[i * 2..i * 2 + 2];
                    if le {
                        u == [b'\n', 0]
                    } else {
                        u == [0, b'\n']
                    }
                })
                .map_or(2, |i| i * 2 + 2)
        }
    }
}

/// How a file's bytes became text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoded {
    /// Valid UTF-8, or UTF-16 after its byte-order mark.
    Exact,
    /// Not UTF-8 and without a single UTF-8 multi-byte character: a legacy 8-bit file,
    /// decoded as Windows-1252 (the WHATWG name for Latin-1 text, as browsers read it).
    Legacy,
    /// Invalid sequences replaced by U+FFFD.
    Lossy,
}

/// Decodes UTF-8, a legacy 8-bit file (Windows-1252) or UTF-16 after its byte-order mark.
fn decode(bytes: &[u8], utf16: Option<bool>) -> (String, Decoded) {
    let Some(le) = utf16 else {
        return match String::from_utf8(bytes.to_vec()) {
            Ok(t) => (t, Decoded::Exact),
            Err(e) => {
                let bytes = e.into_bytes();
                // one UTF-8 character makes it UTF-8 with damage; none, a legacy encoding
                let utf8_somewhere = bytes
                    .utf8_chunks()
                    .any(|c| c.valid().bytes().any(|b| b >= 0x80));
                if utf8_somewhere {
                    (String::from_utf8_lossy(&bytes).into_owned(), Decoded::Lossy)
                } else {
                    let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&bytes);
                    (text.into_owned(), Decoded::Legacy)
                }
            }
        };
    };
    let units = bytes.get(2..).unwrap_or_default().chunks_exact(2).map(|p| {
        if le {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    let mut lossy = bytes.len() % 2 == 1;
    let text = char::decode_utf16(units)
        .map(|r| {
            r.unwrap_or_else(|_| {
                lossy = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect();
    (
        text,
        if lossy {
            Decoded::Lossy
        } else {
            Decoded::Exact
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn utf16(text: &str, le: bool) -> Vec<u8> {
        let mut out = if le {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in text.encode_utf16() {
            out.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        out
    }

    #[test]
    fn binary_is_refused_and_invalid_utf8_decoded_lossily() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin.md");
        fs::write(&bin, b"# x\0\x01\x02").unwrap();
        let latin = d.path().join("latin.md");
        fs::write(&latin, b"caf\xe9\n").unwrap();
        let mut w = Vec::new();
        assert_eq!(
            read_checked(&bin, 1 << 20, &mut w),
            Err(ReadError::Binary("looks binary (NUL byte)".into()))
        );
        let t = read_text(&latin, 1 << 20, &mut w).unwrap();
        assert_eq!(t.text, "café\n", "a Latin-1 file reads as Latin-1");
        assert!(w[0].message.contains("Windows-1252"), "{w:?}");
        // UTF-8 with one damaged byte stays UTF-8: its characters are kept
        let damaged = d.path().join("damaged.md");
        fs::write(
            &damaged,
            "naïve \u{2014} caf"
                .bytes()
                .chain([0xe9, b'\n'])
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        let mut w = Vec::new();
        let t = read_text(&damaged, 1 << 20, &mut w).unwrap();
        assert_eq!(t.text, "naïve \u{2014} caf\u{fffd}\n");
        assert!(w[0].message.contains("lossily"), "{w:?}");
        // the sha256 is of the bytes, whatever the decoding
        assert_eq!(
            t.sha256,
            crate::hashing::sha256_hex(&fs::read(&damaged).unwrap())
        );
    }

    #[test]
    fn utf16_with_a_bom_is_decoded_and_without_one_is_named() {
        let d = tempfile::tempdir().unwrap();
        for le in [true, false] {
            let p = d.path().join(format!("u{le}.md"));
            fs::write(&p, utf16("# Título\n\nTexte é\n", le)).unwrap();
            let mut w = Vec::new();
            let t = read_checked(&p, 1 << 20, &mut w).unwrap();
            assert_eq!(t.text, "# Título\n\nTexte é\n");
            assert!(w.is_empty(), "{w:?}");
        }
        let p = d.path().join("nobom.md");
        fs::write(&p, &utf16("# Heading\n\nplain text\n", true)[2..]).unwrap();
        let e = read_checked(&p, 1 << 20, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("UTF-16"), "{e}");
    }

    #[test]
    fn byte_budget_cuts_at_a_line_end_in_both_encodings() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.md");
        fs::write(&p, "line one\nline two\nline three\n").unwrap();
        let mut w = Vec::new();
        let t = read_text(&p, 12, &mut w).unwrap();
        assert_eq!(t.text, "line one\n");
        assert!(w[0].message.contains("budget"));
        let p = d.path().join("big16.md");
        fs::write(&p, utf16("ab\ncd\nef\n", true)).unwrap();
        let t = read_text(&p, 10, &mut Vec::new()).unwrap();
        assert_eq!(t.text, "ab\n");
    }

    #[test]
    fn a_long_line_over_the_budget_is_cut_at_a_character_not_dropped() {
        let d = tempfile::tempdir().unwrap();
        // a heading, then one line of 4-byte characters far longer than the budget
        let p = d.path().join("one-line.md");
        let long = "# Huge\n".to_string() + &"word 𝄞 ".repeat(2000) + "needle\n";
        fs::write(&p, &long).unwrap();
        for budget in [1000u64, 1001, 1002, 1003] {
            let mut w = Vec::new();
            let t = read_text(&p, budget, &mut w).unwrap();
            assert!(t.text.len() as u64 <= budget && t.text.len() as u64 >= budget - 3);
            assert!(
                long.starts_with(&t.text),
                "a prefix on a character boundary"
            );
            assert!(t.cut && w[0].message.contains("budget"), "{w:?}");
            assert_eq!(t.note.as_deref(), Some(w[0].message.as_str()));
        }
        // the same in UTF-16: whole code units, never half a surrogate pair
        let p = d.path().join("one-line16.md");
        fs::write(&p, utf16(&long, true)).unwrap();
        for budget in [1000u64, 1001, 1002] {
            let t = read_text(&p, budget, &mut Vec::new()).unwrap();
            assert!(long.starts_with(&t.text), "{budget}");
            assert!(t.text.len() > 400, "{budget}: {}", t.text.len());
            assert!(!t.text.contains('\u{fffd}'));
        }
        // budgets smaller than a BOM or a code unit read nothing, without a panic
        for budget in [0u64, 1, 2, 3] {
            let t = read_text(&p, budget, &mut Vec::new()).unwrap();
            assert!(t.text.is_empty() || long.starts_with(&t.text), "{budget}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_not_opened() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("notes.md");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let zero = d.path().join("zero.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for (p, kind) in [(&fifo, "FIFO"), (&zero, "character device")] {
            let e = read_checked(p, 1 << 20, &mut Vec::new()).unwrap_err();
            assert!(e.to_string().contains(kind), "{e}");
        }
    }
}
