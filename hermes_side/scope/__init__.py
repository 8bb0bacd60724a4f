"""Who may see what: a session's project (attribution, lineage), which chat a session belongs to,
the one rule for chat sessions, the per-profile scope map and the guard on Hermes' own tools.
"""
