"""The shipped crawler registry and the loader's validation."""
from __future__ import annotations

import copy

import pytest
import yaml

from config.registry import DEFAULT_PATH, RegistryError, load_registry

REQUIRED_CRAWLERS = [
    "Googlebot", "Googlebot-Image", "Googlebot-Video", "Googlebot-News", "Storebot-Google",
    "Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video",
    "Google-CloudVertexBot", "AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google",
    "APIs-Google", "FeedFetcher-Google", "Google-Read-Aloud", "Google-Site-Verification",
    "Google-Extended", "bingbot", "adidxbot", "MicrosoftPreview", "Applebot", "Applebot-Extended",
    "GPTBot", "OAI-SearchBot", "ChatGPT-User", "ClaudeBot", "Claude-SearchBot", "Claude-User",
    "PerplexityBot", "Perplexity-User", "YandexBot", "Baiduspider", "DuckDuckBot", "CCBot",
    "meta-externalagent", "facebookexternalhit", "meta-externalfetcher", "Amazonbot",
    "Bytespider", "MistralAI-User", "SeznamBot", "PetalBot",
]


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def test_shipped_registry_loads_with_every_required_crawler(registry):
    assert len(registry) >= 150
    missing = [name for name in REQUIRED_CRAWLERS if registry.get(name) is None]
    assert not missing


@pytest.mark.parametrize(
    "name, chain",
    [
        ("Googlebot-Image", ("googlebot-image", "googlebot")),
        ("Googlebot-Video", ("googlebot-video", "googlebot")),
        ("Googlebot-News", ("googlebot-news", "googlebot")),
        ("Storebot-Google", ("storebot-google",)),
        ("GoogleOther-Image", ("googleother-image", "googleother")),
        ("Applebot", ("applebot", "googlebot")),
        ("AdsBot-Google-Mobile", ("adsbot-google-mobile", "adsbot-google")),
        ("bingbot", ("bingbot",)),
        # families whose members obey the family's group when they have none of their own
        ("Googlebot-Mobile", ("googlebot-mobile", "googlebot")),
        ("Baiduspider-image", ("baiduspider-image", "baiduspider")),
        ("Baiduspider-render", ("baiduspider-render", "baiduspider")),
        ("360Spider-Image", ("360spider-image", "360spider")),
        ("MJ12bot", ("mj12bot",)),
        ("archive.org_bot", ("archive.org_bot",)),
        ("Sogou web spider", ("sogou",)),
    ],
)
def test_robots_token_chains(registry, name, chain):
    assert registry.get(name).robots_tokens == chain


def test_every_yandex_robot_falls_back_to_the_yandex_group(registry):
    yandex = [c for c in registry.crawlers if c.operator == "Yandex"]
    assert len(yandex) > 30
    assert all(c.robots_tokens == (c.name.lower(), "yandex") for c in yandex)


def test_every_shipped_entry_names_the_page_it_was_taken_from():
    document = yaml.safe_load(DEFAULT_PATH.read_text("utf-8"))
    unsourced = [e["name"] for e in document["crawlers"] if not e.get("source", "").startswith("http")]
    assert not unsourced


@pytest.mark.parametrize(
    "operator",
    ["Google", "Microsoft", "Yandex", "Baidu", "Sogou", "Qihoo 360", "Naver", "Seznam", "Qwant",
     "Mojeek", "Coc Coc", "DuckDuckGo", "Apple", "Huawei", "Ahrefs", "Semrush", "Majestic", "Moz",
     "WebMeUp", "DataForSEO", "Serpstat", "Babbar", "OpenAI", "Anthropic", "Perplexity",
     "Common Crawl", "ByteDance", "Amazon", "Meta", "Cohere", "Allen Institute for AI", "You.com",
     "Diffbot", "Timpi", "ImageSift", "DeepSeek", "Internet Archive", "X", "LinkedIn", "Pinterest",
     "Slack", "Discord", "Telegram"],
)
def test_the_registry_covers_the_major_operators(registry, operator):
    assert any(c.operator == operator for c in registry.crawlers)


def test_google_classes_bind_their_own_ranges_and_suffixes(registry):
    common = registry.get("Googlebot")
    assert common.range_sources == ("google-common-crawlers",)
    assert common.rdns_suffixes == ("googlebot.com", "google.com")
    special = registry.get("AdsBot-Google")
    assert special.range_sources == ("google-special-crawlers",)
    assert special.rdns_suffixes == ("google.com",)
    fetcher = registry.get("FeedFetcher-Google")
    assert "google-user-triggered-fetchers" in fetcher.range_sources
    assert fetcher.rdns_suffixes == ("gae.googleusercontent.com", "google.com")


def test_googleusercontent_only_proves_user_triggered_fetchers(registry):
    # any Google Cloud customer gets PTR names under googleusercontent.com
    for crawler in registry.crawlers:
        if any(s.endswith("googleusercontent.com") for s in crawler.rdns_suffixes):
            assert crawler.crawler_class == "google-user-triggered", crawler.name


@pytest.mark.parametrize(
    "name, honours_delay",
    [("Googlebot", False), ("bingbot", True), ("ClaudeBot", True), ("YandexBot", False),
     ("Baiduspider", False), ("Amazonbot", False), ("Bytespider", False)],
)
def test_crawl_delay_as_documented(registry, name, honours_delay):
    assert registry.get(name).honours_crawl_delay is honours_delay


def test_robots_only_tokens(registry):
    only = {c.name for c in registry.crawlers if c.robots_only}
    assert only == {"Google-Extended", "Applebot-Extended"}


def test_every_range_source_has_an_https_url(registry):
    assert registry.range_sources
    for source in registry.range_sources.values():
        assert source.url.startswith("https://"), source.name


def test_the_key_directories_operators_document_are_listed(registry):
    # OpenAI documents ChatGPT agent's key directory; no other registry operator documents one
    assert {name: (d.operator, d.url) for name, d in registry.key_directories.items()} == {
        "openai": ("OpenAI", "https://chatgpt.com/.well-known/http-message-signatures-directory"),
    }


# ------------------------------------------------------------------------------ validation


def _base() -> dict:
    return {
        "range_sources": {"examplebot": {"operator": "Example", "url": "https://example.com/r.json"}},
        "crawler_classes": {
            "search": {"description": "search"},
            "bound": {"description": "bound", "ranges": ["examplebot"], "rdns_suffixes": ["x.example"]},
        },
        "crawlers": [
            {
                "name": "ExampleBot",
                "operator": "Example",
                "crawler_class": "search",
                "ua_tokens": ["ExampleBot"],
                "robots_tokens": ["examplebot"],
                "honours_robots": True,
                "honours_crawl_delay": False,
                "purposes": ["search-engine"],
                "ranges": ["examplebot"],
                "rdns_suffixes": ["crawl.example.com"],
            },
            {
                "name": "OtherBot",
                "operator": "Example",
                "crawler_class": "bound",
                "ua_tokens": ["OtherBot"],
                "robots_tokens": ["otherbot", "examplebot"],
                "honours_robots": False,
                "honours_crawl_delay": False,
                "purposes": ["seo-tool", "research"],
            },
        ],
    }


def _write(tmp_path, document) -> str:
    path = tmp_path / "crawlers.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    return str(path)


def test_minimal_registry_loads_and_class_binding_applies(tmp_path):
    registry = load_registry(_write(tmp_path, _base()))
    other = registry.get("otherbot")
    assert other.range_sources == ("examplebot",) and other.rdns_suffixes == ("x.example",)
    assert registry.get("ExampleBot").ua_tokens == ("examplebot",)


def _crawler_change(index, **changes):
    def apply(document):
        document["crawlers"][index].update(changes)
    return apply


def _crawler_drop(index, field):
    def apply(document):
        del document["crawlers"][index][field]
    return apply


def _duplicate_name(document):
    document["crawlers"][1]["name"] = "examplebot"


def _duplicate_ua_token(document):
    document["crawlers"][1]["ua_tokens"] = ["OtherBot", "EXAMPLEBOT"]


def _unused_source(document):
    document["range_sources"]["spare"] = {"operator": "Example", "url": "https://example.com/s"}


def _bad_source_url(document):
    document["range_sources"]["examplebot"]["url"] = "ftp://example.com/r.json"


def _key_directory(**fields):
    def mutate(document):
        entry = {"operator": "Example", "url": "https://example.com/.well-known/http-message-signatures-directory",
                 "source": "https://example.com/bots", "signers": "ExampleBot", **fields}
        document["key_directories"] = {"example": {k: v for k, v in entry.items() if v is not None}}
    return mutate


def _unknown_top_level(document):
    document["crawler"] = []


@pytest.mark.parametrize(
    "mutate, entry, field, words",
    [
        (_crawler_change(0, colour="blue"), "crawlers[0] 'ExampleBot'", "colour", "unknown key"),
        (_crawler_drop(0, "honours_robots"), "crawlers[0] 'ExampleBot'", "honours_robots", "missing"),
        (_crawler_drop(1, "name"), "crawlers[1]", "name", "missing"),
        (_crawler_change(0, honours_robots="maybe"), "crawlers[0] 'ExampleBot'", "honours_robots",
         "true or false"),
        (_crawler_change(0, ua_tokens="ExampleBot"), "crawlers[0] 'ExampleBot'", "ua_tokens", "a list"),
        (_crawler_change(0, operator="  "), "crawlers[0] 'ExampleBot'", "operator", "non-empty"),
        (_duplicate_name, "crawlers[1] 'examplebot'", "name", "duplicate of crawlers[0]"),
        (_duplicate_ua_token, "crawlers[1] 'OtherBot'", "ua_tokens", "already names crawler"),
        (_crawler_change(0, ranges=["nosuch"]), "crawlers[0] 'ExampleBot'", "ranges",
         "'nosuch' is not a key of range_sources"),
        (_crawler_change(0, ranges=[["examplebot"]]), "crawlers[0] 'ExampleBot'", "ranges",
         "is not a key of range_sources"),
        (_crawler_change(0, rdns_suffixes=[".example.com"]), "crawlers[0] 'ExampleBot'",
         "rdns_suffixes", "must not start with '.'"),
        (_crawler_change(0, rdns_suffixes=["example .com"]), "crawlers[0] 'ExampleBot'",
         "rdns_suffixes", "must not contain spaces"),
        (_crawler_change(0, rdns_suffixes=["example.com "]), "crawlers[0] 'ExampleBot'",
         "rdns_suffixes", "must not contain spaces"),
        (_crawler_change(1, rdns_suffixes=["evil.example"]), "crawlers[1] 'OtherBot'",
         "rdns_suffixes", "set by crawler_class 'bound'"),
        (_crawler_change(0, crawler_class="nosuch"), "crawlers[0] 'ExampleBot'", "crawler_class",
         "unknown class"),
        (_crawler_change(0, robots_tokens=["ExampleBot"]), "crawlers[0] 'ExampleBot'",
         "robots_tokens", "is not a token"),
        (_crawler_change(0, robots_tokens=["example bot"]), "crawlers[0] 'ExampleBot'",
         "robots_tokens", "is not a token"),
        (_crawler_change(0, robots_tokens=[]), "crawlers[0] 'ExampleBot'", "robots_tokens",
         "at least one"),
        (_crawler_change(0, ua_tokens=["Example/Bot"]), "crawlers[0] 'ExampleBot'", "ua_tokens",
         "is not a token"),
        (_crawler_change(0, ua_tokens=["Example  Bot"]), "crawlers[0] 'ExampleBot'", "ua_tokens",
         "is not a token"),
        (_crawler_change(0, source="webmeup-crawler.com"), "crawlers[0] 'ExampleBot'", "source",
         "URL of the page"),
        (_crawler_drop(0, "purposes"), "crawlers[0] 'ExampleBot'", "purposes", "missing"),
        (_crawler_change(0, purposes=[]), "crawlers[0] 'ExampleBot'", "purposes", "at least one purpose"),
        (_crawler_change(0, purposes=["spam"]), "crawlers[0] 'ExampleBot'", "purposes", "'spam' is not a purpose"),
        (_crawler_change(0, purposes=["unknown"]), "crawlers[0] 'ExampleBot'", "purposes", "'unknown' is not a purpose"),
        (_crawler_change(0, purposes=["preview", "preview"]), "crawlers[0] 'ExampleBot'", "purposes", "twice"),
        (_unused_source, "range_sources 'spare'", None, "no crawler uses it"),
        (_bad_source_url, "range_sources 'examplebot'", "url", "http(s) URL"),
        (_unknown_top_level, "top level", "crawler", "unknown key"),
        (_key_directory(url="http://example.com/keys"), "key_directories 'example'", "url", "https URL"),
        (_key_directory(operator="Nobody"), "key_directories 'example'", "operator", "no crawler of the registry"),
        (_key_directory(source=None), "key_directories 'example'", "source", "missing"),
    ],
)
def test_validation_errors_name_file_entry_and_field(tmp_path, mutate, entry, field, words):
    document = copy.deepcopy(_base())
    mutate(document)
    path = _write(tmp_path, document)
    with pytest.raises(RegistryError) as caught:
        load_registry(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {entry}")
    if field is not None:
        assert f"field '{field}'" in message
    assert words in message


def test_invalid_yaml_names_the_file(tmp_path):
    path = tmp_path / "crawlers.yaml"
    path.write_text("crawlers: [\n  name: x\n", "utf-8")
    with pytest.raises(RegistryError, match=rf"^{path}: not valid YAML"):
        load_registry(path)


def test_a_key_given_twice_is_an_error_not_a_silent_overwrite(tmp_path):
    text = _write(tmp_path, _base())
    body = open(text, encoding="utf-8").read().replace(
        "range_sources:\n", "range_sources:\n  examplebot: {operator: X, url: 'https://x'}\n", 1
    )
    (tmp_path / "crawlers.yaml").write_text(body, "utf-8")
    with pytest.raises(RegistryError, match="duplicate key 'examplebot'"):
        load_registry(text)


def test_missing_file_and_non_mapping_document(tmp_path):
    with pytest.raises(RegistryError, match="cannot read"):
        load_registry(tmp_path / "absent.yaml")
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n", "utf-8")
    with pytest.raises(RegistryError, match="top level: expected a mapping, got list"):
        load_registry(path)


def test_registry_error_is_a_value_error():
    assert issubclass(RegistryError, ValueError)
    assert DEFAULT_PATH.name == "crawlers.yaml" and DEFAULT_PATH.is_file()


def test_every_shipped_crawler_has_a_documented_purpose(registry):
    by_name = {crawler.name: crawler.purposes for crawler in registry.crawlers}
    assert all(by_name.values())
    assert by_name["Googlebot"] == ("search-engine",)
    assert by_name["GPTBot"] == ("ai-training",)
    assert by_name["OAI-SearchBot"] == ("ai-search",)
    assert by_name["ChatGPT-User"] == ("ai-user-triggered",)
    assert by_name["AhrefsBot"] == ("seo-tool", "search-engine")
    assert by_name["CCBot"] == ("archiver", "ai-training")
    assert by_name["facebookexternalhit"] == ("preview",)
    semantics = (DEFAULT_PATH.parents[1] / "docs" / "semantics.md").read_text("utf-8")
    for purpose in {p for purposes in by_name.values() for p in purposes}:
        assert f"| `{purpose}` |" in semantics, purpose
