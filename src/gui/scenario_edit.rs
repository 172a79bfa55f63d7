//! Edits of a scenario's TOML text that keep what the user wrote: comments, blank lines,
//! key order and the alignment of trailing comments. The designer form calls these; they
//! set a value at a dotted path (creating the key, and the tables above it, when the text
//! has none) or remove a key. Not here: what the keys mean (that is `spec`), or checking
//! the result (the designer validates the new text as it does a typed one).
//!
//! A value that is replaced keeps its decoration, so `nodes = 3   # STATED` becomes
//! `nodes = 6   # STATED`. A new table goes after the last table beside it
//! (`[cluster.node.wal_device]` after `[cluster.node.network]`), a new key at the end of its
//! table; inside an inline table (`erasure = { k = 4, m = 2 }`) a key stays inline.
//!
//! A removed key takes only its own `key = value` with it: a comment after the value
//! stays, as a comment line where the key stood (`cluster = 10   # private link` becomes
//! `# private link`), and the comment lines above and below are untouched, so clearing a
//! field never loses the user's words. (toml_edit alone would drop the comment after the
//! value and the comment lines above the key, which it keeps with the key.)

use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

/// One change the form asks for.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Set the value at a dotted path (`pool.erasure.k`), creating what is missing.
    Set(&'static str, Value),
    /// Remove the key at a dotted path (nothing happens when there is none).
    Remove(&'static str),
}

/// `text` with `edits` applied in order. Fails when the text is not TOML, or when a path
/// runs through a value that is not a table (`pool.replicated.k`).
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("the text is not valid TOML, so the form cannot edit it: {e}"))?;
    for e in edits {
        match e {
            Edit::Set(path, v) => set(&mut doc, path, v.clone())?,
            Edit::Remove(path) => match remove_line(&doc.to_string(), path) {
                Some(text) => {
                    doc = text.parse().map_err(|e| {
                        format!("removing `{path}` left text that is not TOML: {e}")
                    })?;
                }
                None => remove(&mut doc, path)?,
            },
        }
    }
    Ok(doc.to_string())
}

/// The key path and its last key: `a.b.c` → (`[a, b]`, `c`).
fn split(path: &str) -> (Vec<&str>, &str) {
    let mut keys: Vec<&str> = path.split('.').collect();
    let last = keys.pop().unwrap_or_default();
    (keys, last)
}

/// A table written with a `[header]` (or as dotted keys), or an inline `{ … }` table.
enum Node<'a> {
    Table(&'a mut Table),
    Inline(&'a mut InlineTable),
}

/// The table at `keys` (the tables above `path`), the missing ones created when `create` (`None` when missing and
/// not `create`).
fn walk<'a>(
    doc: &'a mut DocumentMut,
    path: &str,
    keys: &[&str],
    create: bool,
) -> Result<Option<Node<'a>>, String> {
    let mut cur = Node::Table(doc.as_table_mut());
    for (i, key) in keys.iter().enumerate() {
        let not_a_table = || {
            format!(
                "`{}` is not a table, so the form cannot set `{path}`: edit it in the text",
                keys[..=i].join(".")
            )
        };
        cur = match cur {
            Node::Table(t) => {
                if !t.contains_key(key) {
                    if !create {
                        return Ok(None);
                    }
                    let mut child = Table::new();
                    child.set_position(last_child_table_position(t).or(t.position()));
                    t.insert(key, Item::Table(child));
                }
                match t.get_mut(key) {
                    Some(Item::Table(c)) => Node::Table(c),
                    Some(Item::Value(Value::InlineTable(c))) => Node::Inline(c),
                    _ => return Err(not_a_table()),
                }
            }
            Node::Inline(t) => {
                if !t.contains_key(key) {
                    if !create {
                        return Ok(None);
                    }
                    t.insert(*key, Value::InlineTable(InlineTable::new()));
                }
                match t.get_mut(key) {
                    Some(Value::InlineTable(c)) => Node::Inline(c),
                    _ => return Err(not_a_table()),
                }
            }
        };
    }
    Ok(Some(cur))
}

/// Where the last `[header]` table directly under `t` stands in the document, so that a
/// new table is written after its siblings rather than at the end of the file.
fn last_child_table_position(t: &Table) -> Option<isize> {
    t.iter()
        .filter_map(|(_, i)| i.as_table().and_then(Table::position))
        .max()
}

fn set(doc: &mut DocumentMut, path: &str, mut v: Value) -> Result<(), String> {
    let (parents, last) = split(path);
    let not_a_value = || format!("`{path}` is a table: edit it in the text");
    match walk(doc, path, &parents, true)?.expect("created when missing") {
        Node::Table(t) => match t.get_mut(last) {
            Some(Item::Value(old)) => {
                *v.decor_mut() = old.decor().clone();
                *old = v;
            }
            Some(Item::None) | None => {
                t.insert(last, Item::Value(v));
            }
            Some(_) => return Err(not_a_value()),
        },
        Node::Inline(t) => match t.get_mut(last) {
            Some(old) => {
                *v.decor_mut() = old.decor().clone();
                *old = v;
            }
            None => {
                // `{ count = 2 }`: the space before `}` belongs to the last value; it
                // moves to the new one so the table reads `{ count = 2, model = "d" }`.
                let trailing = t.iter_mut().last().and_then(|(_, old)| {
                    let s = old.decor().suffix().cloned();
                    old.decor_mut().set_suffix("");
                    s
                });
                t.insert(last, v);
                if let (Some(s), Some(new)) = (trailing, t.get_mut(last)) {
                    new.decor_mut().set_suffix(s);
                }
            }
        },
    }
    Ok(())
}

/// `text` without the line of the key-value at `path`, its trailing comment kept as a
/// comment line at the key's indentation; `None` when `path` is not a key-value of a
/// `[table]` (or dotted-key table) in `text`: a table, a key in an inline table, or no
/// such key (then [`remove`] does the edit).
fn remove_line(text: &str, path: &str) -> Option<String> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let (parents, last) = split(path);
    let mut t = doc.as_table();
    for key in parents {
        t = t.get(key)?.as_table()?;
    }
    let key = t.key(last)?.span()?;
    let value = t.get(last)?.as_value()?.span()?;
    let line_start = text[..key.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[value.end..]
        .find('\n')
        .map_or(text.len(), |i| value.end + i + 1);
    let line = &text[line_start..line_end];
    let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
    let after_value = text[value.end..line_end].trim_start_matches([' ', '\t']);
    let kept = if after_value.starts_with('#') {
        format!("{indent}{after_value}")
    } else {
        String::new()
    };
    Some(format!(
        "{}{kept}{}",
        &text[..line_start],
        &text[line_end..]
    ))
}

fn remove(doc: &mut DocumentMut, path: &str) -> Result<(), String> {
    let (parents, last) = split(path);
    match walk(doc, path, &parents, false)? {
        Some(Node::Table(t)) => {
            t.remove(last);
        }
        Some(Node::Inline(t)) => {
            t.remove(last);
        }
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# a comment on top
[cluster]
nodes = 3          # STATED

[cluster.node]
cpu = \"x\"

[cluster.node.data_devices]
count = 2          # per node
model = \"d\"

[cluster.node.network]
public = 10

[pool]
replicated = 3     # assumed
";

    #[test]
    fn a_replaced_value_keeps_its_comment_and_the_rest_is_untouched() {
        let out = apply(TEXT, &[Edit::Set("cluster.nodes", 6.into())]).unwrap();
        assert_eq!(
            out,
            TEXT.replace("nodes = 3          # STATED", "nodes = 6          # STATED")
        );
    }

    #[test]
    fn a_missing_table_is_created_after_its_siblings_with_its_keys() {
        let out = apply(
            TEXT,
            &[
                Edit::Set("cluster.node.wal_device.model", "w".into()),
                Edit::Set("cluster.node.wal_device.count", 1.into()),
            ],
        )
        .unwrap();
        let want = TEXT.replace(
            "public = 10\n",
            "public = 10\n\n[cluster.node.wal_device]\nmodel = \"w\"\ncount = 1\n",
        );
        assert_eq!(out, want);
        // And removed again: the text as it was.
        let back = apply(&out, &[Edit::Remove("cluster.node.wal_device")]).unwrap();
        assert_eq!(back, TEXT);
    }

    #[test]
    fn switching_to_erasure_coding_swaps_the_keys_and_edits_stay_inline() {
        let ec: Value = "{ k = 2, m = 1 }".parse().unwrap();
        let out = apply(
            TEXT,
            &[
                Edit::Remove("pool.replicated"),
                Edit::Set("pool.erasure", ec),
            ],
        )
        .unwrap();
        // The replica count's comment stays (the new key goes at the end of [pool], and the
        // comment, now a line of its own, is after it).
        assert!(
            out.ends_with("[pool]\nerasure = { k = 2, m = 1 }\n# assumed\n"),
            "{out}"
        );
        let out = apply(&out, &[Edit::Set("pool.erasure.k", 4.into())]).unwrap();
        assert!(
            out.ends_with("[pool]\nerasure = { k = 4, m = 1 }\n# assumed\n"),
            "{out}"
        );
        assert!(out.starts_with("# a comment on top\n[cluster]\nnodes = 3          # STATED"));
    }

    #[test]
    fn dotted_keys_and_inline_tables_take_new_keys_in_their_own_style() {
        let text = "[cluster]\nnode.cpu = \"x\"\nnode.data_devices = { count = 2 }\n";
        let out = apply(
            text,
            &[
                Edit::Set("cluster.node.sockets", 2.into()),
                Edit::Set("cluster.node.data_devices.model", "d".into()),
            ],
        )
        .unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        let node = t["cluster"]["node"].as_table().unwrap();
        assert_eq!(node["sockets"].as_integer(), Some(2));
        assert_eq!(node["data_devices"]["model"].as_str(), Some("d"));
        assert_eq!(node["data_devices"]["count"].as_integer(), Some(2));
        assert!(
            out.contains("node.data_devices = { count = 2, model = \"d\" }"),
            "{out}"
        );
    }

    #[test]
    fn a_removed_key_leaves_its_comment_where_it_stood_and_every_other_line() {
        // `count = 2  # per node` goes; "# per node" stays as a line of its own. The
        // comment lines above the key and the one continuing its comment stay as written.
        let text = "\
[cluster.node.data_devices]
# how many per node
count = 2          # per node
                   #   (two U.2 bays)
model = \"d\"
";
        let out = apply(text, &[Edit::Remove("cluster.node.data_devices.count")]).unwrap();
        assert_eq!(
            out,
            "[cluster.node.data_devices]\n# how many per node\n# per node\n                   #   (two U.2 bays)\nmodel = \"d\"\n"
        );
        // Without a comment the line goes entirely; an indented key keeps its indent for
        // its comment; a key on the last line without a newline works too.
        let out = apply(TEXT, &[Edit::Remove("cluster.node.network.public")]).unwrap();
        assert_eq!(out, TEXT.replace("public = 10\n", ""));
        let out = apply("[a]\n  x = 1  # one\n  y = 2", &[Edit::Remove("a.x")]).unwrap();
        assert_eq!(out, "[a]\n  # one\n  y = 2\n");
        let out = apply("[a]\nx = 1\ny = 2", &[Edit::Remove("a.y")]).unwrap();
        assert_eq!(out, "[a]\nx = 1\n");
        // A dotted key: its line goes, the comment stays.
        let out = apply(
            "[c]\nnode.cpu = \"x\" # the CPU\nn = 1\n",
            &[Edit::Remove("c.node.cpu")],
        )
        .unwrap();
        assert_eq!(out, "[c]\n# the CPU\nn = 1\n");
        // Set again: the key is written at the end of its table, the comment left alone.
        let out = apply(
            &apply(TEXT, &[Edit::Remove("pool.replicated")]).unwrap(),
            &[Edit::Set("pool.replicated", 2.into())],
        )
        .unwrap();
        assert!(
            out.ends_with("[pool]\nreplicated = 2\n# assumed\n"),
            "{out}"
        );
    }

    #[test]
    fn a_path_through_a_value_is_refused_and_bad_toml_is_named() {
        let e = apply(TEXT, &[Edit::Set("pool.replicated.k", 1.into())]).unwrap_err();
        assert!(
            e.contains(
                "`pool.replicated` is not a table, so the form cannot set `pool.replicated.k`"
            ),
            "{e}"
        );
        let e = apply("a = = 1", &[Edit::Remove("a")]).unwrap_err();
        assert!(e.contains("not valid TOML"), "{e}");
    }
}
