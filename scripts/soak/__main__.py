"""`python3 -m soak` from scripts/: the same as scripts/soak.py."""
from .run import main

main()
