"""Keep a backup folder in step with a source folder."""
