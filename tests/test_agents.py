"""User-Agent reading: product tokens, crawler claims, registry identification, robots tokens."""
from __future__ import annotations

import pytest

from config.registry import parse_registry
from matcher import agents
from matcher.agents import claims_crawler, default_registry, product_token, robots_tokens

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)
# A phone whose model name contains "bot": platform words are not product tokens.
CUBOT_PHONE = (
    "Mozilla/5.0 (Linux; Android 9; CUBOT_X19 Build/PPR1.180610.011) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
)
OLD_IE = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
GOOGLEBOT_SMARTPHONE = (
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Googlebot/2.1; "
    "+http://www.google.com/bot.html)"
)
INSPECTION_TOOL_MOBILE = (
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Google-InspectionTool/1.0)"
)
APPLEBOT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"
)
ADSBOT_MOBILE = (
    "Mozilla/5.0 (Linux; Android 5.0; SM-G920A) AppleWebKit (KHTML, like Gecko) Chrome Mobile "
    "Safari (compatible; AdsBot-Google-Mobile; +http://www.google.com/mobile/adsbot.html)"
)


@pytest.mark.parametrize(
    "ua, token",
    [
        ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.3; "
            "+https://openai.com/gptbot)",
            "gptbot",
        ),
        # OpenAI's published form closes the comment before `compatible`
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; "
            "+https://openai.com/bot",
            "chatgpt-user",
        ),
        ("FooBot/1.0 (+http://foo.example/bot)", "foobot"),
        ("Mozilla/5.0 (compatible; FooBot/1.2; +http://foo.example/bot)", "foobot"),
        ("Mozilla/5.0 (compatible;PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
         "petalbot"),
        (
            "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile "
            "Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
            "bytespider",
        ),
        ("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
         "slurp"),
        ("Mozilla/5.0 (compatible; Google-Site-Verification/1.0)", "google-site-verification"),
        ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
         "facebookexternalhit"),
        ("Mediapartners-Google", "mediapartners-google"),
        ("Googlebot-Image/1.0", "googlebot-image"),
        (APPLEBOT, "applebot"),
        (INSPECTION_TOOL_MOBILE, "google-inspectiontool"),
        ("curl/8.4.0", "curl"),
    ],
)
def test_product_token(ua, token):
    assert product_token(ua) == token


@pytest.mark.parametrize("ua", [CHROME, FIREFOX, SAFARI_IPHONE, CUBOT_PHONE, OLD_IE, "", "((;;))"])
def test_browsers_and_garbage_have_no_crawler_token(ua):
    assert product_token(ua) is None
    assert not claims_crawler(ua)


@pytest.mark.parametrize(
    "ua, claims",
    [
        ("FooBot/1.0", True),  # crawler-like name
        ("Mozilla/5.0 (compatible; Qwant/1.0)", True),  # `compatible; X` names a product
        ("Example-Preview/2.0 (+https://example.com/preview)", True),  # contact reference
        ("Fetcher-of-things/0.1 ops@example.com", True),
        ("curl/8.4.0", False),  # a tool, not a declared crawler
        ("python-requests/2.31.0", False),
        (INSPECTION_TOOL_MOBILE, True),
    ],
)
def test_claims_crawler(ua, claims):
    assert claims_crawler(ua) is claims


def test_registry_name_is_a_claim_even_without_crawler_words():
    assert claims_crawler("Mediapartners-Google")
    assert not claims_crawler("Mediapartners-Google", parse_registry(_tiny_registry()))


@pytest.mark.parametrize(
    "ua, name",
    [
        ("Googlebot-Image/1.0", "Googlebot-Image"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"),
        (GOOGLEBOT_SMARTPHONE, "Googlebot"),
        (INSPECTION_TOOL_MOBILE, "Google-InspectionTool"),
        (ADSBOT_MOBILE, "AdsBot-Google-Mobile"),
        ("AdsBot-Google (+http://www.google.com/adsbot.html)", "AdsBot-Google"),
        ("GOOGLEBOT/2.1", "Googlebot"),  # case-insensitive
        (APPLEBOT, "Applebot"),
        ("Mozilla/5.0 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)",
         "Baiduspider"),
        ("Mozilla/5.0 (compatible; Google-Extended)", "Google-Extended"),
    ],
)
def test_identify(ua, name):
    crawler = default_registry().identify(ua)
    assert crawler is not None and crawler.name == name


@pytest.mark.parametrize(
    "ua",
    ["Googlebotx/1.0", "NotGooglebot/2.1", "Googlebot2.1", "Googlebot_Image/1.0", "xbingbot/2.0",
     CHROME, ""],
)
def test_look_alikes_are_not_identified(ua):
    assert default_registry().identify(ua) is None


def test_most_specific_token_wins_whatever_the_order():
    registry = default_registry()
    assert registry.identify("Googlebot/2.1 Googlebot-Image/1.0").name == "Googlebot-Image"
    assert registry.identify("Googlebot-Image/1.0 Googlebot/2.1").name == "Googlebot-Image"


def test_tokens_never_match_as_substrings():
    registry = parse_registry(_tiny_registry())
    assert registry.identify("Googlebot/2.1 (+http://www.google.com/bot.html)") is None
    assert registry.identify("Mozilla/5.0 (compatible; bot/1.0)").name == "bot"
    assert robots_tokens("Googlebot", registry) == ("googlebot",)


@pytest.mark.parametrize(
    "agent, tokens",
    [
        ("Googlebot-Image", ("googlebot-image", "googlebot")),
        ("Googlebot-Image/1.0", ("googlebot-image", "googlebot")),
        ("Googlebot-Video/1.0", ("googlebot-video", "googlebot")),
        ("Googlebot-News", ("googlebot-news", "googlebot")),
        ("GoogleOther-Image/1.0", ("googleother-image", "googleother")),
        ("Storebot-Google/1.0", ("storebot-google",)),
        (APPLEBOT, ("applebot", "googlebot")),
        (ADSBOT_MOBILE, ("adsbot-google-mobile", "adsbot-google")),
        ("Google-Extended", ("google-extended",)),
        ("FooBot", ("foobot",)),
        ("foo_bot", ("foo_bot",)),
        ("Mozilla/5.0 (compatible; FooBot/1.2; +http://foo.example/bot)", ("foobot",)),
        # the whole name, compared whole: AB42bot never selects a group whose token reads `ab`
        ("AB42bot", ("ab42bot",)),
        ("  FooBot  ", ("foobot",)),
        ("Foo Bar", ()),  # a bare name that is not one token
        ("", ()),
        ("   ", ()),
        ("((;;))", ()),
        (CHROME, ()),
    ],
)
def test_robots_tokens(agent, tokens):
    assert robots_tokens(agent) == tokens


def test_robots_tokens_are_cached_per_agent():
    agents._robots_tokens.cache_clear()
    for _ in range(3):
        robots_tokens(GOOGLEBOT_SMARTPHONE)
    info = agents._robots_tokens.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_huge_user_agent_is_read_only_up_to_the_limit():
    assert robots_tokens("FooBot/1.0 " + "x" * 1_000_000) == ("foobot",)
    assert product_token(" " * agents.MAX_USER_AGENT + "FooBot/1.0") is None


def test_default_registry_is_loaded_once():
    assert default_registry() is default_registry()


def _tiny_registry() -> dict:
    return {
        "range_sources": {},
        "crawler_classes": {"search": {"description": "test"}},
        "crawlers": [
            {
                "name": "bot",
                "operator": "Example",
                "crawler_class": "search",
                "ua_tokens": ["bot"],
                "robots_tokens": ["bot"],
                "honours_robots": True,
                "honours_crawl_delay": False,
            }
        ],
    }
