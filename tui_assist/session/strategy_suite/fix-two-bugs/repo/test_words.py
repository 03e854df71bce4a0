import unittest

from words import longest_word, word_count


class WordsTest(unittest.TestCase):
    def test_word_count(self):
        self.assertEqual(word_count("a  b c"), 3)

    def test_word_count_of_nothing(self):
        self.assertEqual(word_count(""), 0)

    def test_longest_word(self):
        self.assertEqual(longest_word("a bbb cc"), "bbb")


if __name__ == "__main__":
    unittest.main()
