Feature: Cucumbers
  Background:
    Given a basket

  Scenario: Eating one
    Given there are 5 cucumbers
    When I eat 1 cucumbers
    Then I should have 4 cucumbers

  Scenario Outline: Eating some
    Given there are <start> cucumbers
    When I eat <eat> cucumbers
    Then I should have <left> cucumbers

    Examples:
      | start | eat | left |
      |  12   |  5  |  7   |
      |  20   |  5  |  15  |
      |   3   |  1  |  1   |

  @slow
  Scenario: Eating [all] of them: "quotes" and ::colons
    Given there are 2 cucumbers
    When I eat 2 cucumbers
    Then I should have 0 cucumbers
