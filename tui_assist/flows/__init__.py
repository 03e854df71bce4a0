"""Concrete workflows built on the core: helpdesk explorer, docs policies, grounded Q&A."""
