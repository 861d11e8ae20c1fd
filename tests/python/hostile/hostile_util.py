"""What the hostile suites share: an assertion that a call raises one exception type, whose
message (when words are given) holds one of them."""


def raises(exc, fn, *words):
    try:
        fn()
    except exc as e:
        msg = str(e)
        assert not words or any(w in msg for w in words), f"{type(e).__name__}: {msg}"
        return
    except Exception as e:  # noqa: BLE001 - the wrong exception is the failure reported
        raise AssertionError(f"expected {exc.__name__}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc.__name__}, nothing was raised")
