import unittest

from settings_loader import get, get_int


class LoaderTest(unittest.TestCase):
    def test_present(self):
        self.assertEqual(get({"a": 1}, "a"), 1)

    def test_missing_gives_the_default(self):
        self.assertEqual(get({}, "a", "x"), "x")
        self.assertIsNone(get({}, "a"))

    def test_get_int_default(self):
        self.assertEqual(get_int({}, "port"), 0)
        self.assertEqual(get_int({"port": "80"}, "port"), 80)


if __name__ == "__main__":
    unittest.main()
