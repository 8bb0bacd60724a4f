"""The Hermes installation the plugin runs in: which profile, where its files live, which optional
packages are present. Imported by every other part; imports none of them.
"""
