"""The samples of a workspace in the window: a list of the sample files beside an editor that
checks a sample's JSON as it is typed and shows its structure (:mod:`.editor` puts them together).
"""
