package chaos

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestWithinKeepsTableRecordsOfTheCorpus: a tableRecords line names its
// customer and event as the SDK holds the attributes; Within keeps the
// lines about the reference's events and drops the others.
func TestWithinKeepsTableRecordsOfTheCorpus(t *testing.T) {
	line := func(customer, event string) string {
		return "ContactsTable " + itemJSON(map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "email#" + customer}, "sk": &types.AttributeValueMemberS{Value: "contact"},
			"customer": &types.AttributeValueMemberS{Value: customer}, "event": &types.AttributeValueMemberS{Value: event},
		})
	}
	ref := Snapshot{Business: []string{line("cus_1", "stripe#evt_1")}}
	got := Snapshot{Business: []string{line("cus_1", "stripe#evt_1"), line("cus_9", "stripe#evt_9")}}.Within(ref)
	if len(got.Business) != 1 || got.Business[0] != line("cus_1", "stripe#evt_1") {
		t.Errorf("Within kept %q, want only the reference's customer", got.Business)
	}
}
