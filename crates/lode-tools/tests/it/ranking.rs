//! Ranking and search bounds on a small hand-made catalog.

use std::sync::{Arc, OnceLock};

use lode_tools::{
    Catalog, Embedder, IndexOptions, Limits, NO_MATCH_NOTE, StaticModel, Tool, Toolbox,
    model_result,
};
use serde_json::{Value, json};

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    Tool::new(name, description, schema)
}

fn catalog() -> Catalog {
    Catalog::new(vec![
        tool(
            "get_forecast",
            "Weather forecast for the next days.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ),
        tool(
            "send_message",
            "Send a message to a channel.",
            json!({"type": "object", "properties": {
                "channel": {"type": "string"},
                "attachments": {"type": "array", "items": {"type": "object", "properties": {
                    "thumbnail_url": {"type": "string", "description": "Preview picture shown inline"}}}}}}),
        ),
        tool(
            "search_repos",
            "Find repositories on the code host by keyword.",
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        ),
        tool(
            "list_issues",
            "List the open issues of a repository, newest first; search them by label.",
            json!({"type": "object", "properties": {"repo": {"type": "string"}}}),
        ),
        tool(
            "convert_currency",
            "Convert an amount between currencies at today's exchange rate.",
            json!({"type": "object", "properties": {"amount": {"type": "number"}}}),
        ),
        tool("translate", "将文本翻译成另一种语言", Value::Null),
        tool(
            "search",
            "Search the web for pages matching a query.",
            Value::Null,
        ),
    ])
    .unwrap()
}

fn lexical() -> Toolbox {
    Toolbox::builder(catalog()).build().unwrap()
}

fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<dyn Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| Arc::new(StaticModel::builtin()))
        .clone()
}

fn top(toolbox: &Toolbox, query: &str) -> Vec<String> {
    let out = toolbox.search(query, Some(10));
    toolbox.ranked_names(&out).map(str::to_string).collect()
}

#[test]
fn parameter_text_finds_a_tool_its_name_and_description_do_not_mention() {
    let tb = lexical();
    // "thumbnail" and "preview" appear only in a nested parameter of send_message.
    assert_eq!(top(&tb, "thumbnail preview picture")[0], "send_message");
}

#[test]
fn name_words_outrank_description_words() {
    let tb = lexical();
    // "search" is in search_repos' and search's names, and only in list_issues' description.
    let ranked = top(&tb, "search repositories");
    assert_eq!(ranked[0], "search_repos", "{ranked:?}");
    let issues = ranked.iter().position(|n| n == "list_issues").unwrap();
    assert!(issues > 0);
}

#[test]
fn inflections_meet_through_the_stemmer() {
    let tb = lexical();
    assert_eq!(top(&tb, "converting currency")[0], "convert_currency");
    assert_eq!(top(&tb, "forecasts")[0], "get_forecast");
}

#[test]
fn an_exact_name_ranks_first_but_a_plain_word_in_a_sentence_does_not() {
    let tb = lexical();
    // list_issues is named; the description words favour search_repos.
    assert_eq!(
        top(&tb, "use list_issues to find repositories by keyword")[0],
        "list_issues"
    );
    assert_eq!(top(&tb, "listIssues")[0], "list_issues");
    // The whole query "search" is the name of a tool: it comes first.
    let out = tb.search("search", None);
    assert!(out.ranked[0].exact);
    assert_eq!(tb.ranked_names(&out).next(), Some("search"));
    // In a sentence, "search" is a word like any other.
    let out = tb.search("search repositories by keyword", None);
    assert!(out.ranked.iter().all(|r| !r.exact));
}

#[test]
fn cjk_descriptions_are_searchable() {
    let tb = lexical();
    assert_eq!(top(&tb, "翻译文本")[0], "translate");
}

#[test]
fn a_query_without_any_known_word_finds_nothing_lexically() {
    let tb = lexical();
    assert!(tb.search("zebra quasar", None).activated.is_empty());
    assert!(tb.search("the of and", None).activated.is_empty());
}

#[test]
fn embeddings_find_what_words_do_not() {
    let lexical = lexical();
    let query = "will it rain in Paris tomorrow";
    assert!(!top(&lexical, query).contains(&"get_forecast".to_string()));
    let hybrid = Toolbox::builder(catalog())
        .index_options(IndexOptions {
            embedder: Some(model()),
            ..IndexOptions::default()
        })
        .build()
        .unwrap();
    assert!(hybrid.index().is_hybrid());
    assert_eq!(top(&hybrid, query)[0], "get_forecast");
    // Lexical evidence still counts in the fusion.
    assert_eq!(top(&hybrid, "convert currency")[0], "convert_currency");
}

fn hybrid(semantic_floor: f32) -> Toolbox {
    Toolbox::builder(catalog())
        .index_options(IndexOptions {
            embedder: Some(model()),
            semantic_floor,
            ..IndexOptions::default()
        })
        .build()
        .unwrap()
}

#[test]
fn a_query_about_nothing_in_the_catalog_activates_nothing_and_says_so() {
    let tb = hybrid(lode_tools::SEMANTIC_FLOOR);
    for query in [
        "zzqqxx_nomatch",
        "asdf qwer",
        "bake a chocolate cake",
        "reboot the kubernetes cluster",
        "recipe for lasagna",
    ] {
        let out = tb.search(query, None);
        assert!(out.activated.is_empty(), "{query}: {:?}", top(&tb, query));
        assert_eq!(
            model_result(&tb, &out),
            json!({"activated": [], "note": NO_MATCH_NOTE})
        );
    }
    // Without the floor the embedder finds something for each of them.
    let unfloored = hybrid(0.0);
    assert!(!unfloored.search("asdf qwer", None).activated.is_empty());
    // A paraphrase sharing no word with its tool still passes the floor.
    assert_eq!(top(&tb, "will it rain in Paris tomorrow"), ["get_forecast"]);
    assert_eq!(
        top(&tb, "show me the bugs reported on my project")[0],
        "list_issues"
    );
}

#[test]
fn searches_never_return_direct_tools_and_respect_the_limit() {
    let tb = Toolbox::builder(catalog())
        .direct(["search_repos"])
        .build()
        .unwrap();
    let out = tb.search("search repositories issues", Some(2));
    let names: Vec<&str> = tb.names(&out.activated).collect();
    assert!(!names.contains(&"search_repos") && !names.contains(&"tool_search"));
    assert!(names.len() <= 2 && !names.is_empty());
    // A limit over the maximum is clamped; zero is raised to one.
    assert!(tb.search("a b c search", Some(1000)).activated.len() <= tb.limits().max_results);
    assert_eq!(tb.search("search", Some(0)).limit, 1);
    // The inventory names deferred tools only.
    let inv = tb.inventory();
    assert_eq!(inv.tool_count(), catalog().len() - 1);
    assert!(!inv.render().contains("search_repos"));
}

#[test]
fn the_schema_budget_skips_what_does_not_fit_and_keeps_what_does() {
    let cat = catalog();
    let size = |n: &str| cat.size(cat.position(n).unwrap()).bytes;
    // Room for list_issues alone: search_repos, ranked higher but larger, must wait.
    let budget = size("list_issues");
    assert!(size("search_repos") > budget || size("search_repos") + size("list_issues") > budget);
    let tb = Toolbox::builder(cat.clone())
        .limits(Limits {
            schema_budget_bytes: budget,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let out = tb.search("search repository issues", None);
    let activated: Vec<&str> = tb.names(&out.activated).collect();
    assert!(tb.size_of(&out.activated).bytes <= budget);
    assert!(!out.over_budget.is_empty(), "{activated:?}");
    let result = model_result(&tb, &out);
    assert_eq!(result["over_budget"], json!(out.over_budget));
    // The model-facing result is thin: names only, never a schema.
    assert!(!result.to_string().contains("properties"));
}

#[test]
fn bad_configurations_are_refused() {
    assert!(
        Toolbox::builder(catalog())
            .direct(["nope"])
            .build()
            .is_err()
    );
    let zero = Limits {
        default_results: 0,
        ..Limits::default()
    };
    assert!(Toolbox::builder(catalog()).limits(zero).build().is_err());
    let taken = Catalog::new(vec![tool("tool_search", "mine", Value::Null)]).unwrap();
    assert!(Toolbox::builder(taken.clone()).build().is_err());
    let renamed = Toolbox::builder(taken)
        .search_tool_name("find_tools")
        .build()
        .unwrap();
    assert_eq!(renamed.search_tool().name, "find_tools");
}
