"""earshot_agents' tests (test_agents.py), run by clients/agents/test.sh."""
