import unittest

from shop.pricing import calc_total


class PricingTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(calc_total([(2.5, 2), (1.0, 3)]), 8.0)

    def test_total_with_tax(self):
        self.assertEqual(calc_total([(10.0, 1)], tax_rate=0.2), 12.0)


if __name__ == "__main__":
    unittest.main()
