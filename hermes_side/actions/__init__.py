"""What changes something or reports on it: moving a conversation, chat bindings, status.
"""
