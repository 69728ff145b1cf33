import pytest
import yaml
from hypothesis import given, strategies as st

from config.registry import DEFAULT_PATH, RegistryError, default_registry, parse_registry
from matcher.referrals import (
    REFERER, REMEMBERED_REFERER_CHARS, REMEMBERED_REFERERS, UTM_SOURCE, Referrer, Referrers, referer_host,
)

REFERRERS = Referrers([
    Referrer("OpenAI", ("chatgpt.com", "chat.openai.com"), ("chatgpt.com",), None, "https://example.org/openai"),
    Referrer("Google", ("gemini.google.com",), ("gemini",), "google", "https://example.org/google"),
    Referrer("Microsoft", ("copilot.microsoft.com",), (), "bing", "https://example.org/microsoft"),
])


@pytest.mark.parametrize("referer, operator", [
    ("https://chatgpt.com/", "OpenAI"),
    ("https://www.chatgpt.com/c/1", "OpenAI"),
    ("https://CHATGPT.COM./", "OpenAI"),
    ("https://chat.openai.com/", "OpenAI"),
    ("https://eu.chat.openai.com/x", "OpenAI"),  # a subdomain: at a label boundary
    ("https://openai.com/", None),  # the operator's site is not the service
    ("https://notchatgpt.com/", None),
    ("https://chatgpt.com.evil.example/", None),
    ("https://www.google.com/search?q=x", "Google"),
    ("https://www.google.co.uk/", "Google"),
    ("https://google.com.au/", "Google"),
    ("https://news.google.de/", "Google"),
    ("https://gemini.google.com/app", "Google"),
    ("https://googleusercontent.com/", None),
    ("https://www.bing.com/search?q=x", "Microsoft"),
    ("https://cn.bing.com/", "Microsoft"),
    ("android-app://com.google.android.gm/", None),
    ("-", None),
    ("", None),
    (None, None),
    ("http://[::1", None),  # unreadable: no host
])
def test_a_referer_names_an_operator_s_service_at_a_label_boundary(referer, operator):
    assert REFERRERS.of_host(referer_host(referer)) == operator


def test_utm_source_is_compared_case_insensitively_and_may_be_a_service_host():
    assert REFERRERS.referral(None, "/a?utm_source=ChatGPT.com") == ("OpenAI", UTM_SOURCE)
    assert REFERRERS.referral(None, "/a?x=1&utm_source=GEMINI") == ("Google", UTM_SOURCE)
    assert REFERRERS.referral(None, "/a?utm_source=www.bing.com") == ("Microsoft", UTM_SOURCE)
    assert REFERRERS.referral(None, "/a?utm_source=newsletter") is None
    assert REFERRERS.referral(None, "/a?utm_medium=chatgpt.com") is None


def test_a_visit_named_both_ways_counts_once_by_its_referer():
    assert REFERRERS.referral("https://chatgpt.com/", "/a?utm_source=gemini") == ("OpenAI", REFERER)


@given(st.one_of(st.text(max_size=80), st.sampled_from(["https://www.google.de/", "https://chatgpt.com/c/1", "-"])))
def test_a_referer_s_operator_is_remembered_as_read(referer):
    referrers = Referrers(REFERRERS.referrers)
    for _ in range(2):  # read, then remembered
        assert referrers.of_referer(referer) == REFERRERS.of_host(referer_host(referer))


def test_a_worker_remembers_a_bounded_number_of_referers_and_none_too_long():
    referrers = Referrers(REFERRERS.referrers)
    for number in range(3 * REMEMBERED_REFERERS):
        referrers.of_referer(f"https://example.org/{number}")
    long = "https://chatgpt.com/" + "x" * REMEMBERED_REFERER_CHARS
    assert referrers.of_referer(long) == "OpenAI"
    assert 0 < len(referrers._by_referer) <= REMEMBERED_REFERERS and long not in referrers._by_referer


def test_the_shipped_registry_lists_the_services_with_sources():
    referrers = default_registry().referrers
    operators = {r.operator for r in referrers.referrers}
    assert {"OpenAI", "Perplexity", "Anthropic", "Google", "Microsoft"} <= operators
    assert all(r.source.startswith("https://") for r in referrers.referrers)
    for host, operator in [("chatgpt.com", "OpenAI"), ("perplexity.ai", "Perplexity"), ("claude.ai", "Anthropic"),
                           ("gemini.google.com", "Google"), ("copilot.microsoft.com", "Microsoft"),
                           ("google.fr", "Google"), ("bing.com", "Microsoft")]:
        assert referrers.of_host(host) == operator, host


def test_a_referrer_without_a_source_is_refused():
    document = yaml.safe_load(DEFAULT_PATH.read_text("utf-8"))
    document["referrers"]["X"] = {"hosts": ["x.test"]}
    with pytest.raises(RegistryError, match="referrers: X: field 'source'"):
        parse_registry(document)
