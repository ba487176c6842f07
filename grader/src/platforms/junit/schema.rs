//! The part of Jenkins' JUnit schema that the grader's files use, checked
//! structurally: source jenkinsci/xunit-plugin,
//! src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd
//! (MIT, read at commit 031e285e; the schema the xUnit plugin validates a
//! JUnit report against before it reads it). What
//! is copied: each element's allowed attributes (required ones marked), its
//! children as an ordered sequence with their counts, and the `time` type
//! (SUREFIRE_TIME). Anything else in a file is an error here, as it is there.

use std::collections::BTreeMap;

/// One element's rule: attributes (`name`, required), then the children in order (`name`, min, max).
struct Rule {
    element: &'static str,
    attributes: &'static [(&'static str, bool)],
    children: &'static [(&'static str, usize, usize)],
    /// Whether text may appear among the children.
    text: bool,
    /// The children in any order (an `xs:choice` repeated), not a sequence.
    any_order: bool,
}

const MANY: usize = usize::MAX;

const RULES: &[Rule] = &[
    Rule {
        element: "testsuites",
        attributes: &[("name", false), ("time", false), ("tests", false), ("failures", false), ("errors", false)],
        children: &[("testsuite", 0, MANY)],
        text: false,
        any_order: false,
    },
    Rule {
        element: "testsuite",
        attributes: &[
            ("name", true),
            ("tests", true),
            ("failures", true),
            ("errors", true),
            ("group", false),
            ("time", false),
            ("skipped", false),
            ("timestamp", false),
            ("hostname", false),
            ("id", false),
            ("package", false),
            ("file", false),
            ("log", false),
            ("url", false),
        ],
        children: &[
            ("testsuite", 0, MANY),
            ("properties", 0, MANY),
            ("testcase", 0, MANY),
            ("system-out", 0, MANY),
            ("system-err", 0, MANY),
        ],
        text: false,
        any_order: true,
    },
    Rule { element: "properties", attributes: &[], children: &[("property", 0, MANY)], text: false, any_order: false },
    Rule {
        element: "property",
        attributes: &[("name", true), ("value", true)],
        children: &[],
        text: false,
        any_order: false,
    },
    Rule {
        element: "testcase",
        attributes: &[("name", true), ("time", false), ("classname", false), ("group", false)],
        children: &[
            ("skipped", 0, MANY),
            ("error", 0, MANY),
            ("failure", 0, MANY),
            ("system-out", 0, MANY),
            ("system-err", 0, MANY),
        ],
        text: false,
        any_order: true,
    },
    Rule {
        element: "skipped",
        attributes: &[("message", false), ("type", false)],
        children: &[],
        text: true,
        any_order: false,
    },
    Rule {
        element: "error",
        attributes: &[("message", false), ("type", false)],
        children: &[],
        text: true,
        any_order: false,
    },
    Rule {
        element: "failure",
        attributes: &[("message", false), ("type", false)],
        children: &[],
        text: true,
        any_order: false,
    },
    Rule { element: "system-out", attributes: &[], children: &[], text: true, any_order: false },
    Rule { element: "system-err", attributes: &[], children: &[], text: true, any_order: false },
];

/// An XML element as read: name, attributes, children and text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Element {
    pub name: String,
    pub attributes: BTreeMap<String, String>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
}

/// Reads a document into its root element.
pub fn parse(text: &str) -> Result<Element, String> {
    use quick_xml::events::Event;
    let element = |e: &quick_xml::events::BytesStart| -> Result<Element, String> {
        let mut attributes = BTreeMap::new();
        for a in e.attributes() {
            let a = a.map_err(|e| e.to_string())?;
            let value = a.normalized_value(quick_xml::XmlVersion::Explicit1_0).map_err(|e| e.to_string())?;
            attributes.insert(a.key.as_ref().to_string(), value.into_owned());
        }
        Ok(Element { name: e.name().as_ref().to_string(), attributes, ..Default::default() })
    };
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack = vec![Element::default()];
    loop {
        let top = stack.len() - 1;
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => stack.push(element(&e)?),
            Event::Empty(e) => stack[top].children.push(element(&e)?),
            Event::End(_) => {
                let done = stack.pop().ok_or("an end tag without a start")?;
                stack.last_mut().ok_or("an end tag without a start")?.children.push(done);
            }
            Event::Text(t) => stack[top].text += &t.xml10_content(),
            Event::GeneralRef(r) => {
                let name = r.as_ref().to_string();
                let c = quick_xml::escape::resolve_predefined_entity(&name)
                    .map(str::to_string)
                    .or_else(|| r.resolve_char_ref().ok().flatten().map(String::from))
                    .ok_or(format!("unknown entity &{name};"))?;
                stack[top].text += &c;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        return Err("an element is not closed".into());
    }
    let mut root = stack.pop().expect("one");
    if root.children.len() != 1 {
        return Err(format!("{} root elements", root.children.len()));
    }
    Ok(root.children.pop().expect("one"))
}

/// What junit-10.xsd finds wrong with `root` (nothing: valid).
pub fn validate(root: &Element) -> Vec<String> {
    let mut errors = Vec::new();
    if root.name != "testsuites" && root.name != "testsuite" {
        errors.push(format!("root <{}>: junit-10.xsd has <testsuites> or <testsuite>", root.name));
    }
    check(root, &root.name, &mut errors);
    errors
}

fn check(e: &Element, path: &str, errors: &mut Vec<String>) {
    let Some(rule) = RULES.iter().find(|r| r.element == e.name) else {
        errors.push(format!("{path}: no element <{}> in junit-10.xsd", e.name));
        return;
    };
    for (name, value) in &e.attributes {
        if !rule.attributes.iter().any(|(a, _)| a == name) {
            errors.push(format!("{path}: attribute `{name}` is not allowed on <{}>", e.name));
        }
        if name == "time" && !is_surefire_time(value) {
            errors.push(format!("{path}: time `{value}` is not a SUREFIRE_TIME"));
        }
    }
    for (name, required) in rule.attributes {
        if *required && !e.attributes.contains_key(*name) {
            errors.push(format!("{path}: <{}> needs the attribute `{name}`", e.name));
        }
    }
    if !rule.text && !e.text.trim().is_empty() {
        errors.push(format!("{path}: <{}> holds text", e.name));
    }
    if rule.any_order {
        for c in &e.children {
            if !rule.children.iter().any(|(name, _, _)| *name == c.name) {
                let allowed: Vec<&str> = rule.children.iter().map(|c| c.0).collect();
                errors.push(format!(
                    "{path}: <{}> inside <{}> is not allowed there (allowed: {})",
                    c.name,
                    e.name,
                    allowed.join(", ")
                ));
            }
        }
        for c in &e.children {
            let name = c.attributes.get("name").map(|n| format!("[{n}]")).unwrap_or_default();
            check(c, &format!("{path}/{}{name}", c.name), errors);
        }
        return;
    }
    // The children, as one pass over the sequence.
    let mut i = 0;
    for (name, min, max) in rule.children {
        let n = e.children[i..].iter().take_while(|c| c.name == *name).count();
        if n < *min || n > *max {
            errors.push(format!("{path}: <{}> holds {n} <{name}> (allowed {min} to {})", e.name, max_text(*max)));
        }
        i += n;
    }
    if let Some(extra) = e.children.get(i) {
        let allowed: Vec<&str> = rule.children.iter().map(|c| c.0).collect();
        errors.push(format!(
            "{path}: <{}> inside <{}> is not allowed there (the sequence is: {})",
            extra.name,
            e.name,
            if allowed.is_empty() { "nothing".to_string() } else { allowed.join(", ") }
        ));
    }
    for c in &e.children {
        let name = c.attributes.get("name").map(|n| format!("[{n}]")).unwrap_or_default();
        check(c, &format!("{path}/{}{name}", c.name), errors);
    }
}

fn max_text(max: usize) -> String {
    if max == MANY {
        "any".into()
    } else {
        max.to_string()
    }
}

/// SUREFIRE_TIME: `(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?`, i.e.
/// digits (with thousands commas) and decimals.
pub fn is_surefire_time(value: &str) -> bool {
    let (whole, fraction) = match value.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (value, None),
    };
    whole.chars().all(|c| c.is_ascii_digit() || c == ',')
        && fraction.is_none_or(|f| f.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_xunit_plugin_rejects_is_rejected() {
        let ok = r#"<testsuites tests="1"><testsuite name="a" tests="1" failures="1" errors="0" skipped="0"><properties><property name="p" value="1"/></properties><testcase name="t" time="0.010"><failure type="wrong" message="m">x &lt; y</failure><system-out>o</system-out></testcase></testsuite></testsuites>"#;
        assert_eq!(validate(&parse(ok).unwrap()), Vec::<String>::new());
        let bad = [
            (r#"<testsuites skipped="1"/>"#, "attribute `skipped`"),
            (
                r#"<testsuites><testsuite name="a" tests="1"><testcase name="t" file="a.cu" line="3"/></testsuite></testsuites>"#,
                "attribute `file`",
            ),
            (
                r#"<testsuites><testsuite name="a" tests="1"><testcase name="t"><properties><property name="p" value="1"/></properties></testcase></testsuite></testsuites>"#,
                "<properties> inside <testcase>",
            ),
            (r#"<testsuites><testsuite name="a"/></testsuites>"#, "needs the attribute `tests`"),
            (r#"<testsuites><testsuite name="a" tests="1"/></testsuites>"#, "needs the attribute `failures`"),
            (
                r#"<testsuites><testsuite name="a" tests="1" failures="0" errors="0" time="-1.5"/></testsuites>"#,
                "SUREFIRE_TIME",
            ),
            (
                r#"<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="t" status="x"/></testsuite></testsuites>"#,
                "attribute `status`",
            ),
        ];
        for (xml, why) in bad {
            let errors = validate(&parse(xml).unwrap());
            assert!(errors.iter().any(|e| e.contains(why)), "{xml}: {errors:?}");
        }
    }
}
