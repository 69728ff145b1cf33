"""User-Agent reading: product tokens, crawler claims, registry identification, robots tokens."""
from __future__ import annotations

import pytest

from config.bot_lists import maintained_bot_list
from config.registry import default_registry, parse_registry
from matcher import agents, audit
from matcher.agents import claims_crawler, product_token, robots_tokens

REGISTRY = default_registry()

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
    assert product_token(ua, REGISTRY) == token


@pytest.mark.parametrize("ua", [CHROME, FIREFOX, SAFARI_IPHONE, CUBOT_PHONE, OLD_IE, "", "((;;))"])
def test_browsers_and_garbage_have_no_crawler_token(ua):
    assert product_token(ua, REGISTRY) is None
    assert not claims_crawler(ua, REGISTRY)


@pytest.mark.parametrize(
    "ua, claims",
    [
        ("FooBot/1.0", True),  # a name ending in a crawler word
        ("Example-Preview/2.0 (+https://example.com/preview)", True),  # contact reference
        ("Fetcher-of-things/0.1 ops@example.com", True),
        ("curl/8.4.0", False),  # a tool, not a declared crawler
        ("python-requests/2.31.0", False),
        ("Mozilla/5.0 (compatible; FreePBX-Scanner/1.0)", True),  # on Matomo's bot list
        (INSPECTION_TOOL_MOBILE, True),
        # `compatible; X` alone is no claim: old browsers write it too
        ("Mozilla/5.0 (compatible; Qwant/1.0)", False),
    ],
)
def test_claims_crawler(ua, claims):
    assert claims_crawler(ua, REGISTRY) is claims


def test_registry_name_is_a_claim_even_without_crawler_words():
    assert claims_crawler("Qwantify/1.0", REGISTRY) and claims_crawler("Daumoa", REGISTRY)
    document = _tiny_registry()
    document["crawlers"][0]["ua_tokens"] = ["quuxly"]
    assert claims_crawler("Quuxly/1.0", parse_registry(document))
    assert not claims_crawler("Quuxly/1.0", REGISTRY)


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
         "Baiduspider-render"),
        ("Mozilla/5.0 (compatible; Google-Extended)", "Google-Extended"),
    ],
)
def test_identify(ua, name):
    crawler = REGISTRY.identify(ua)
    assert crawler is not None and crawler.name == name


@pytest.mark.parametrize(
    "ua",
    ["Googlebotx/1.0", "NotGooglebot/2.1", "Googlebot2.1", "Googlebot_Image/1.0", "xbingbot/2.0",
     CHROME, ""],
)
def test_look_alikes_are_not_identified(ua):
    assert REGISTRY.identify(ua) is None


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
    assert robots_tokens(agent, REGISTRY) == tokens


def test_a_remembered_agent_is_answered_by_the_registry_asked():
    """Answers are remembered: asked again, or under another registry, they stay that registry's."""
    document = _tiny_registry()
    document["crawlers"][0].update(name="Googlebot-Image", ua_tokens=["googlebot-image"], robots_tokens=["googlebot-image"])
    own_chain = parse_registry(document)
    for _ in range(2):
        assert robots_tokens("Googlebot-Image/1.0", REGISTRY) == ("googlebot-image", "googlebot")
        assert robots_tokens("Googlebot-Image/1.0", own_chain) == ("googlebot-image",)
        assert robots_tokens(GOOGLEBOT_SMARTPHONE, own_chain) == ("googlebot",)  # a product token there


def test_huge_user_agent_is_read_only_up_to_the_limit():
    assert robots_tokens("FooBot/1.0 " + "x" * 1_000_000, REGISTRY) == ("foobot",)
    assert product_token(" " * agents.MAX_USER_AGENT + "FooBot/1.0", REGISTRY) is None


def test_default_registry_is_loaded_once():
    assert default_registry() is default_registry()


def test_a_crawler_is_found_by_its_name_in_any_case():
    registry = default_registry()
    googlebot = registry.get("Googlebot")
    assert googlebot is not None and googlebot.operator == "Google"
    assert registry.get("GOOGLEBOT") is registry.get("googlebot") is googlebot
    assert registry.get("Googlebot/2.1") is None  # a name, not a User-Agent
    assert registry.get("nobot") is None
    assert len(registry) == len(registry.crawlers) > 50


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
                "purposes": ["search-engine"],
            }
        ],
    }


# Real User-Agents from access logs and public lists, each read the way its operator documents.
@pytest.mark.parametrize(
    "ua, name, tokens",
    [
        ("Baiduspider+(+http://www.baidu.com/search/spider.htm)", "Baiduspider", ("baiduspider",)),
        ("Baiduspider-image+(+http://www.baidu.com/search/spider.htm)", "Baiduspider-image",
         ("baiduspider-image", "baiduspider")),
        ("Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
         "Sogou web spider", ("sogou",)),
        ("Sogou Pic Spider/3.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
         "Sogou web spider", ("sogou",)),
        ("Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.1 (KHTML, like Gecko) Chrome/21.0.1180.89 "
         "Safari/537.1; 360Spider", "360Spider", ("360spider",)),
        ("360Spider", "360Spider", ("360spider",)),
        ("Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b",
         "BingPreview", ("bingpreview",)),
        ("Mozilla/5.0 (en-us) AppleWebKit/525.13 (KHTML, like Gecko; Google Web Preview) "
         "Version/3.1 Safari/525.13", "Google Web Preview", ("google",)),
        ("Claude-Web/1.0 (web crawler; +https://www.anthropic.com/; bots@anthropic.com)",
         "Claude-Web", ("claude-web",)),
        ("Qwantify/1.0", "Qwantify", ("qwantify",)),
        ("Mozilla/5.0 (compatible; Qwantify/2.0n; +https://www.qwant.com/)/*", "Qwantify",
         ("qwantify",)),
        ("Mozilla/5.0 (compatible; MSIE or Firefox mutant; not on Windows server;) Daumoa/4.0 "
         "(Following Mediapartners-Google)", "Daumoa", ("daumoa",)),
        ("DoCoMo/2.0 N905i(c100;TB;W24H16) (compatible; Googlebot-Mobile/2.1; "
         "+http://www.google.com/bot.html)", "Googlebot-Mobile", ("googlebot-mobile", "googlebot")),
        ("Mozilla/5.0 (compatible; YandexMetrika/2.0; +http://yandex.com/bots)", "YandexMetrika",
         ("yandexmetrika", "yandex")),
        ("Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)", "YandexImages",
         ("yandeximages", "yandex")),
        ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot", ("mj12bot",)),
        ("Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)",
         "archive.org_bot", ("archive.org_bot",)),
    ],
)
def test_real_crawler_user_agents_get_their_operators_token_chain(ua, name, tokens):
    crawler = REGISTRY.identify(ua)
    assert crawler is not None and crawler.name == name
    assert robots_tokens(ua, REGISTRY) == tokens
    assert claims_crawler(ua, REGISTRY)


@pytest.mark.parametrize(
    "ua",
    [
        # Ecosia's app version, not an e-mail address
        "Mozilla/5.0 (Linux; Android 10; SHIFT6mq) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/88.0.4324.181 Mobile Safari/537.36 (Ecosia android@88.0.4324.181)",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 10_2_1 like Mac OS X) AppleWebKit/602.4.6 (KHTML, like "
        "Gecko) Mobile/14D27 (Ecosia ios@3.0.1.533)",
        # a phone model containing "bot"
        "Mozilla/5.0 (Linux; Android 8.0.0; CUBOT_P20) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/70.0.3538.64 Mobile Safari/537.36",
        # `compatible; U;` and other old browsers naming themselves after `compatible`
        "Mozilla/5.0 (compatible; U; Haiku x86; en-GB) AppleWebKit/536.10 (KHTML, like Gecko) "
        "Haiku/R1 WebPositive/1.1 Safari/536.10",
        "Mozilla/5.0 (compatible; U; ABrowse 0.6; Syllable) AppleWebKit/420+ (KHTML, like Gecko)",
        "Mozilla/3.0 (compatible; NetPositive/2.2.1; BeOS)",
        "Mozilla/5.0 (compatible; IBrowse 3.0; AmigaOS4.0)",
        "IBrowse/2.4 (AmigaOS 3.9; 68K)",
        "Mozilla/4.7 (compatible; OffByOne; Windows 2000) Webster Pro V3.4",
        # Sogou's own browser is not its crawler
        "Mozilla/5.0 (Linux; Android 10; TLA001 Build/QP1A.190711.020; wv) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Version/4.0 Chrome/80.0.3987.132 Safari/537.36 SogouMSE,"
        "SogouMobileBrowser/5.22.8",
    ],
)
def test_browsers_never_claim_a_crawler(ua):
    assert not claims_crawler(ua, REGISTRY)
    assert REGISTRY.identify(ua) is None


@pytest.mark.parametrize(
    "ua, token",
    [
        # not in the registry: recognised by the maintained list, audited under the product token
        ("Mozilla/5.0 (compatible; Barkrowler/0.9; +https://babbar.tech/crawler)", "barkrowler"),
        ("Mozilla/5.0 (compatible; SeekportBot; +https://bot.seekport.com)", "seekportbot"),
        ("Mozilla/5.0 (compatible; Linux x86_64; Mail.RU_Bot/2.0; +https://help.mail.ru/webmaster/indexing/robots)",
         "mail.ru_bot"),
        ("Scrapy/2.11.0 (+https://scrapy.org)", "scrapy"),
    ],
)
def test_unlisted_bots_are_claimed_under_their_product_token(ua, token):
    assert claims_crawler(ua, REGISTRY)
    assert product_token(ua, REGISTRY) == token


def test_the_maintained_list_is_compiled_once_and_its_claims_need_no_registry_entry():
    assert maintained_bot_list() is maintained_bot_list()
    seekport = "Mozilla/5.0 (compatible; SeekportBot; +https://bot.seekport.com)"
    tiny = parse_registry(_tiny_registry())
    for _ in range(2):
        assert claims_crawler(seekport, REGISTRY) and claims_crawler(seekport, tiny)
        assert tiny.identify(seekport) is None and not claims_crawler(CHROME, tiny)


@pytest.mark.parametrize(
    "ua, token",
    [
        ("okhttp/4.9.0", "okhttp"),
        ("Apache Ant/1.10.9", "apache"),
        ("Adyen HttpClient 1.0", "adyen"),
        ("Mozilla/5.0 (compatible; Cloudinary/1.0)", "cloudinary"),
        ("Mozilla/5.0 (compatible; ExampleThumbs/2.1)", "examplethumbs"),
        ("Mozilla/5.0 Tweetminster", ""),  # names nothing but the prefix: audited by `*`
    ],
)
def test_a_header_naming_no_platform_is_an_automated_client(ua, token):
    assert agents.client_kind(ua, REGISTRY) == agents.AUTOMATED
    assert (agents.automated_token(ua, REGISTRY) or "") == token


@pytest.mark.parametrize(
    "ua, token",
    [
        (f"{CHROME} ExampleThumb/2.0", "examplethumb"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/534.34 (KHTML, like Gecko) wkhtmltopdf Safari/534.34", "wkhtmltopdf"),
        ("SiteCheckPro/2.0 (Windows NT 10.0; Win64; x64)", "sitecheckpro"),
        (f"{FIREFOX} ExampleMonitor", "examplemonitor"),
        ("example-fetch/1.2.0 (Node.js v20.11.0; linux x64)", "example-fetch"),
        ("Akregator/5.24.3 (X11; Linux x86_64)", "akregator"),  # a feed reader, on Matomo's list, polls
        ("Microsoft Office Excel 2014 (16.0.6528) Windows NT 10.0", "microsoft"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X) Word/16.80.0", "word"),
        ("Microsoft-WebDAV-MiniRedir/10.0.19045", "microsoft-webdav-miniredir"),
    ],
)
def test_a_header_saying_what_a_program_does_is_an_automated_client_even_behind_a_browser(ua, token):
    assert agents.client_kind(ua, REGISTRY) == agents.AUTOMATED
    assert agents.automated_token(ua, REGISTRY) == token


def test_a_tool_that_declares_itself_a_crawler_stays_a_crawler():
    ua = "ExampleLinkCheckBot/1.0 (+https://example.com/bot)"
    assert agents.client_kind(ua, REGISTRY) == agents.CRAWLER


@pytest.mark.parametrize(
    "ua",
    [
        CHROME, FIREFOX, SAFARI_IPHONE, CUBOT_PHONE, OLD_IE,
        # a phone's model name, not a page capture
        "Mozilla/5.0 (Linux; Android 8.1.0; Capture+) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.87 Mobile Safari/537.36",
        "Mozilla/3.0 (compatible; NetPositive/2.2.1; BeOS)",
        "Mozilla/5.0 (compatible; IBrowse 3.0; AmigaOS4.0)",
        "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.1.1d",
        "w3m/0.5.3+git20230121",
        "Opera/9.80 (J2ME/MIDP; Opera Mini/9.80 (S60; SymbOS; Opera Mobi/23.348; U; en) Presto/2.5.25 Version/10.54",
        "MOT-V3/0E.42.0ER MIB/2.2.1 Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "SEC-SGHE250/1.0 UP.Link/6.3.1.12.0",  # a phone behind its operator's WAP gateway
        "Nokia6230/2.0 (04.44) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        "DoCoMo/2.0 N905i(c100;TB;W24H16)",
        "Instagram 309.1.0.41.113 (iPhone13,2; iOS 17_1_1; en_US; en; scale=3.00; 1170x2532; 541635890)",
        "Spotify/8.8.96 iOS/17.2 (iPhone15,3)",
        "VLC/3.0.20 LibVLC/3.0.20",
        "Roku/DVP-9.10 (519.10E04111A)",
        "",  # no header at all is no client of either kind
    ],
)
def test_browsers_phones_and_apps_describe_their_platform(ua):
    assert agents.client_kind(ua, REGISTRY) == agents.BROWSER


@pytest.mark.parametrize(
    "ua",
    [
        "-",
        "42",
        "undefined",
        "Default",
        "x7k2qpd",  # a throw-away token sent as the whole header
        " q4ttz9r ",
        "Mozilla/5.0",
        "Mozilla/5.0 (compatible; )",
        "Mozilla/4.0 (compatible; en-US)",
        "Mozilla/5.0 (0000000; 000 00) XXXXXXXXXXXX XXXX XXXXXXX",
    ],
)
def test_a_header_that_names_no_client_is_read_as_an_empty_one(ua):
    assert agents.client_kind(ua, REGISTRY) == agents.client_kind("", REGISTRY) == agents.BROWSER
    assert audit.claim_of(ua, REGISTRY) is None


@pytest.mark.parametrize(
    "ua, token",
    [
        ("ExampleFetch", "examplefetch"),
        ("h2load/1.5", "h2load"),  # a digit inside a versioned name is no nonce
        ("x7k2qpd/1.0", "x7k2qpd"),
        ("WWW::Mechanize/1.0", "www"),  # three letters name something, the same three too
        ('"example-tool 2.0"', "example-tool"),  # a header logged inside quotes names its product
        ("Mozilla/5.0 (compatible; Examplr)", "examplr"),
    ],
)
def test_a_header_with_a_name_in_it_stays_an_automated_client(ua, token):
    assert agents.client_kind(ua, REGISTRY) == agents.AUTOMATED
    assert agents.automated_token(ua, REGISTRY) == token


@pytest.mark.parametrize(
    "ua",
    [
        "Accoona-AI-Agent/1.1.2 (aicrawler at accoonabot dot com)",
        "Mozilla/5.0/Firefox/42.0 (contactbigdatafr at gmail.com)",
        "ExampleAgent/2.0 (ops [at] example [dot] org)",
    ],
)
def test_an_address_spelled_out_is_a_contact_and_claims_a_crawler(ua):
    assert claims_crawler(ua, REGISTRY)
    assert agents.client_kind(ua, REGISTRY) == agents.CRAWLER
