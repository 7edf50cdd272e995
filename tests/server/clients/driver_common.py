"""What the Python driver scripts share: a check that names what failed, and the way a script
reports (prints "ok" and exits 0, or prints what failed and exits 1)."""
import sys


def check(ok, what, got=None):
    if not ok:
        raise AssertionError("failed: %s (got %r)" % (what, got))


def run(main):
    try:
        main()
    except Exception as e:  # noqa: BLE001 - the test prints what failed
        print(e, file=sys.stderr)
        sys.exit(1)
    print("ok")
