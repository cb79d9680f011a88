"""The fresh-machine lanes' smoke (tests/fresh.sh): see test_demo_smoke.py."""
