"""Provider formats: captured request bodies turned into pre-LLM samples (with what the import
loses), and the body a provider receives for a request once ADF has prepared it
(spec/provider-requests.md)."""
