"""HTTP: the pages, the forms of accounts, the JSON API."""
