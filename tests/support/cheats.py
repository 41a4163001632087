"""What a dishonest submission writes, shared by the tests of the hidden tests.

``LIAR_SOURCE`` defines ``_Liar``: a ``str`` subclass that claims to equal anything and
stays one through ``strip``, ``lower`` and ``upper``, so that a hidden test comparing an
answer without first converting it to a plain ``str`` would give it the points. It is
source text because the tests run it as a student's answer cell.
"""

LIAR_SOURCE = '''
class _Liar(str):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__
    def strip(self, *args):
        return self
    def lower(self):
        return self
    def upper(self):
        return self
'''
