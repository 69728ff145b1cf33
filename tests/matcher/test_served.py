from hypothesis import given, strategies as st

from matcher.served import OTHER_REFUSAL, SERVED, STATUS_CLASSES, answer, status_class, total_bytes


def test_status_classes_by_first_digit_of_100_to_599():
    assert [status_class(s) for s in (100, 199, 200, 304, 403, 451, 503, 599)] == [
        "1xx", "1xx", "2xx", "3xx", "4xx", "4xx", "5xx", "5xx",
    ]
    assert [status_class(s) for s in (0, 99, 600, 999)] == ["other"] * 4
    assert status_class(None) == "none"


@given(st.one_of(st.none(), st.integers(min_value=-10, max_value=2000)))
def test_every_status_has_one_of_the_schema_s_classes(status):
    assert status_class(status) in STATUS_CLASSES


def test_answers_name_the_refusals_apart():
    assert [answer(s) for s in (200, 206, 401, 403, 451, 429, 404, 410)] == [
        SERVED, SERVED, "401", "403", "451", "429", OTHER_REFUSAL, OTHER_REFUSAL,
    ]
    assert [answer(s) for s in (301, 503, None, 999)] == ["3xx", "5xx", "none", "other"]


def test_bytes_sum_is_null_only_when_no_size_was_logged():
    assert total_bytes([None, None]) is None
    assert total_bytes([]) is None
    assert total_bytes([None, 0]) == 0
    assert total_bytes([512, None, 100]) == 612
