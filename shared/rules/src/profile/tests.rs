use super::*;
use serde_json::json;

fn field_of(e: DomainError) -> String {
    match e {
        DomainError::Invalid { field, .. } => field.into_owned(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn names_are_stored_in_nfc_and_counted_after_it() {
    // "e" + combining acute: two code points, one character in NFC.
    let composed = display_name("Zoe\u{301}").unwrap();
    assert_eq!(composed, "Zo\u{e9}");
    let at_limit: String = "e\u{301}".repeat(32);
    assert_eq!(display_name(&at_limit).unwrap().chars().count(), 32);
    assert!(display_name(&"x".repeat(33)).is_err());
    assert!(display_name("").is_err());
    assert_eq!(
        display_name("Ångström 北京 🙂").unwrap(),
        "Ångström 北京 🙂"
    );
}

#[test]
fn names_refuse_hidden_characters_and_edge_spaces() {
    for bad in [
        "a\u{0}b",
        "tab\there",
        "new\nline",
        "rtl\u{202e}txet",
        "zero\u{200b}width",
        "bom\u{feff}",
        "line\u{2028}sep",
        "private\u{e000}",
        "tag\u{e0041}",
        " lead",
        "trail ",
        "\u{3000}ideographic",
    ] {
        assert_eq!(
            field_of(display_name(bad).unwrap_err()),
            "display_name",
            "{bad:?}"
        );
    }
    assert!(display_name("inner space ok").is_ok());
}

#[test]
fn metadata_is_kept_as_compact_json_and_read_back_only_as_an_object() {
    let md = Metadata::parse(json!({"car": "gt3", "laps": [61.2, 60.8]})).unwrap();
    assert_eq!(md.as_str(), r#"{"car":"gt3","laps":[61.2,60.8]}"#);
    assert_eq!(Metadata::stored(md.as_str()), Some(md.clone()));
    assert_eq!(md.to_object()["car"], "gt3");
    // The digest tells other metadata apart and is stable for the same text.
    let other = Metadata::parse(json!({"car": "gt4", "laps": [61.2, 60.8]})).unwrap();
    assert_eq!(md.digest().len(), 12);
    assert_eq!(md.digest(), Metadata::stored(md.as_str()).unwrap().digest());
    assert_ne!(md.digest(), other.digest());
    // What storage holds that is not an object shows as none, never fails a read.
    for stored in ["[1]", "\"x\"", "not json", ""] {
        assert_eq!(Metadata::stored(stored), None, "{stored}");
    }
    // Compact JSON escapes control characters: the Redis separator never appears.
    let tricky = Metadata::parse(json!({"k": "a\u{1e}b\u{1f}c"})).unwrap();
    assert!(!tricky.as_str().contains('\u{1e}'), "{}", tricky.as_str());
}

#[test]
fn avatars_are_https_urls_or_asset_ids() {
    assert!(avatar("https://cdn.example.com/a/1.png").is_ok());
    assert!(avatar("https://cdn.example.com/a.png?v=2&size=64").is_ok());
    assert!(avatar("https://cdn.example.com").is_ok());
    assert!(avatar("avatars/fox-3.png").is_ok());
    for bad in [
        "http://cdn.example.com/a.png",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "https://user:pw@example.com/a.png",
        "https://",
        "https://example.com:8443/a.png",
        "https://Example.com/a.png",
        "https://cdn.example.com/a b.png",
        "//evil.example.com/a.png",
        ".hidden",
        "has space",
        "",
    ] {
        assert_eq!(field_of(avatar(bad).unwrap_err()), "avatar", "{bad:?}");
    }
    let long = format!("https://example.com/{}", "a".repeat(500));
    assert!(avatar(&long).is_err());
    assert!(avatar(&"a".repeat(65)).is_err());
}

#[test]
fn countries_are_assigned_alpha_2_codes() {
    for ok in ["SE", "US", "JP", "BR", "ZW"] {
        assert!(country(ok).is_ok(), "{ok}");
    }
    for bad in ["se", "XX", "UK", "SWE", "S", "", "ZZ"] {
        assert_eq!(field_of(country(bad).unwrap_err()), "country", "{bad}");
    }
    assert_eq!(COUNTRIES.split(' ').count(), 249);
}

#[test]
fn attributes_and_metadata_are_small_objects() {
    let body = ProfileBody {
        attributes: Some(json!({"level": 12, "clan": "ABC"})),
        ..ProfileBody::default()
    };
    assert!(body.validate().unwrap().attributes.is_some());
    let big = json!({"blob": "x".repeat(2048)});
    let body = ProfileBody {
        attributes: Some(big.clone()),
        ..ProfileBody::default()
    };
    assert_eq!(field_of(body.validate().unwrap_err()), "attributes");
    assert_eq!(field_of(metadata(big).unwrap_err()), "metadata");
    assert_eq!(field_of(metadata(json!([1, 2])).unwrap_err()), "metadata");
    assert!(metadata(json!({"replay": "r-1", "car": "gt3"})).is_ok());
    let edge = json!({"k": "x".repeat(MAX_METADATA_BYTES - 8)});
    assert_eq!(
        serde_json::to_string(&edge).unwrap().len(),
        MAX_METADATA_BYTES
    );
    assert!(metadata(edge).is_ok());
}

#[test]
fn a_body_names_the_first_field_it_refuses() {
    let body = ProfileBody {
        display_name: Some("ok".into()),
        country: Some("XX".into()),
        ..ProfileBody::default()
    };
    assert_eq!(field_of(body.validate().unwrap_err()), "country");
    assert!(ProfileBody::default().validate().unwrap().card.is_empty());
}

/// `text`'s rule as a regular expression over the code points a name may hold:
/// none of `refused_in_name` (or a surrogate) anywhere, and none of the white space
/// at either end. Code points below U+10000 as the regex escape `\uXXXX`, the rest
/// as YAML's `\UXXXXXXXX` (the character itself in the pattern: ECMA-262 without
/// the `u` flag and Python's `re` share no escape for them).
fn text_pattern_core() -> String {
    let class = |keep: &dyn Fn(u32) -> bool| {
        let esc = |cp: u32| match cp {
            0..=0xFFFF => format!("\\\\u{cp:04X}"),
            _ => format!("\\U{cp:08X}"),
        };
        let mut out = String::new();
        let mut cp = 0;
        while cp <= 0x10FFFF {
            if !keep(cp) {
                cp += 1;
                continue;
            }
            let start = cp;
            while cp < 0x10FFFF && keep(cp + 1) {
                cp += 1;
            }
            out.push_str(&esc(start));
            if cp > start {
                out.push('-');
                out.push_str(&esc(cp));
            }
            cp += 1;
        }
        out
    };
    let refused = |cp: u32| char::from_u32(cp).is_none_or(refused_in_name);
    let edge = |cp: u32| refused(cp) || char::from_u32(cp).is_some_and(char::is_whitespace);
    let (inside, ends) = (class(&refused), class(&edge));
    format!("[^{ends}](?:[^{inside}]*[^{ends}])?")
}

/// The document states the characters `text` refuses as patterns, so a client
/// generated from it checks names as the service does (the fuzzer sends strings
/// on both sides of each pattern).
#[test]
fn the_documents_name_patterns_are_the_rule_here() {
    let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi.yaml"));
    let core = text_pattern_core();
    let required = format!("pattern: \"^{core}$\"");
    let optional = format!("pattern: \"^(?:{core})?$\"");
    let found = |line: &str, name: &str| {
        (doc.lines())
            .skip_while(|l| !l.trim_start().starts_with(name))
            .take(8)
            .any(|l| l.trim() == line)
    };
    for name in ["DisplayName:", "NullableDisplayName:", "TournamentTitle:"] {
        assert!(
            found(&required, name),
            "{name} in openapi.yaml needs\n      {required}"
        );
    }
    assert!(
        found(&optional, "TournamentDescription:"),
        "TournamentDescription in openapi.yaml needs\n      {optional}"
    );
}

#[test]
fn a_names_search_key_ignores_case_accents_width_and_spacing() {
    for name in [
        "Zoë  Ångström",
        "ZOE ANGSTROM",
        "\u{ff5a}\u{ff4f}\u{ff45} angstro\u{308}m",
        " zoe\tangstrom ",
    ] {
        assert_eq!(search_key(name), "zoe angstrom", "{name:?}");
    }
    assert_eq!(search_key("Émilie"), "emilie");
    assert_eq!(
        search_key("Łukasz"),
        "łukasz",
        "a letter of its own, not a mark"
    );
    assert_eq!(search_key("Straße"), "straße");
    assert_eq!(search_key("ﬁnn"), "finn", "a ligature decomposes");
    assert!(search_key("Émilie").starts_with(&search_key("EMI")));
    assert!(!search_key("Emma").starts_with(&search_key("emi")));
}
