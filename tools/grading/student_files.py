"""The limits of what a submission gives the grader: the bytes of its notebook, of each
other file, how many other files its kernel is given and their bytes together.

The files themselves are read and copied by ``tools.common.safe_files`` (regular files
only, no link followed, every read bounded by these limits).

Stage: none (the limits collect, staging and the sandbox apply).
"""

MAX_NOTEBOOK = 50 * 1024 * 1024  # bytes of one submitted notebook
MAX_FILE = 50 * 1024 * 1024  # bytes of one other file of a submission
MAX_FILES = 100  # other files of one submission given to its kernel
MAX_FILES_TOTAL = 200 * 1024 * 1024  # their bytes together
