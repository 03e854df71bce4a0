import unittest

from contacts import load_contacts

EXPORT = """name,email,phone
Ada Lovelace,ada@example.com,555-0100
"Hopper, Grace",grace@example.com,555-0199
"""


class ContactsTest(unittest.TestCase):
    def test_plain_row(self):
        self.assertEqual(load_contacts(EXPORT)[0]["email"], "ada@example.com")

    def test_quoted_name_with_a_comma(self):
        row = load_contacts(EXPORT)[1]
        self.assertEqual(row["name"], "Hopper, Grace")
        self.assertEqual(row["phone"], "555-0199")


if __name__ == "__main__":
    unittest.main()
