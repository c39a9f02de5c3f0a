"""``te-doctor plan``: install planning before anyone runs pip."""
