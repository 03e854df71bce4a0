import unittest

from invoice import line, total_line


class InvoiceTest(unittest.TestCase):
    def test_line(self):
        self.assertEqual(line("Coffee", 1234.5), "Coffee.............. $1,234.50")

    def test_total(self):
        self.assertEqual(total_line(99), "TOTAL............... $99.00")


if __name__ == "__main__":
    unittest.main()
