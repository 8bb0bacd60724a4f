"""Chat commands. Importing the modules registers their matchers under this plugin."""

from . import admin as admin
from . import forget as forget
from . import recall as recall
