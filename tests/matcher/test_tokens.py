import pytest

from matcher.tokens import product_token


@pytest.mark.parametrize(
    ("value", "token"),
    [
        ("Googlebot/2.1", "googlebot"),
        ("MJ12bot", "mj12bot"),
        ("archive.org_bot", "archive.org_bot"),
        ("360Spider", "360spider"),
        ("Googlebot-Image/1.0", "googlebot-image"),
        ("AB42bot", "ab42bot"),
        ("Sogou web spider/4.0", "sogou"),
        ("*OrkashBot*", ""),
        ("", ""),
    ],
)
def test_token_is_the_leading_run_of_letters_digits_dots_underscores_and_hyphens(value, token):
    assert product_token(value) == token
