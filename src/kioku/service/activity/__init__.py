"""The unified activity log (spec 001, 統一アクティビティログ): recording and reading events."""
