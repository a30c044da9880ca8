"""Test support code shared by several test modules (tiny offline models)."""
