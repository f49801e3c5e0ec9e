Feature: Skips
  Scenario: A skipped scenario
    Given a step that skips

  Scenario: An undefined step
    Given a step nobody defined
