package effects

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
)

func TestVersionAfter(t *testing.T) {
	tests := []struct {
		name string
		v, o Version
		want bool
	}{
		{"LaterAt", Version{2, "evt_a"}, Version{1, "evt_z"}, true},
		{"EarlierAt", Version{1, "evt_z"}, Version{2, "evt_a"}, false},
		{"TieGreaterID", Version{1, "evt_b"}, Version{1, "evt_a"}, true},
		{"TieSmallerID", Version{1, "evt_a"}, Version{1, "evt_b"}, false},
		{"Equal", Version{1, "evt_a"}, Version{1, "evt_a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.After(tt.o); got != tt.want {
				t.Errorf("%v.After(%v) = %t, want %t", tt.v, tt.o, got, tt.want)
			}
		})
	}
}

// write is one event's write of the record under test.
type write struct {
	v     Version
	state string
}

func TestPutIfNewer(t *testing.T) {
	const n = 8
	var inOrder []write
	for i := 0; i < n; i++ {
		inOrder = append(inOrder, write{Version{int64(1_700_000_000 + i), fmt.Sprintf("evt_%02d", i)}, "state-" + strconv.Itoa(i)})
	}
	reversed := make([]write, n)
	for i, w := range inOrder {
		reversed[n-1-i] = w
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shuffled := append([]write(nil), inOrder...)
	rng.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	tie := []write{
		{Version{1_700_000_000, "evt_B"}, "from-B"},
		{Version{1_700_000_000, "evt_C"}, "from-C"},
		{Version{1_700_000_000, "evt_A"}, "from-A"},
	}

	tests := []struct {
		name        string
		writes      []write
		want        write
		wantApplied int
	}{
		{"InOrder", inOrder, inOrder[n-1], n},
		{"Reversed", reversed, inOrder[n-1], 1},
		{"Shuffled", shuffled, inOrder[n-1], -1},
		{"Redelivered", []write{inOrder[1], inOrder[1], inOrder[0], inOrder[1]}, inOrder[1], 1},
		{"TieGreaterEventIDWins", tie, tie[1], 2},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, table := dynamoForTest(t)
			applied := 0
			for _, w := range tt.writes {
				ok, err := PutIfNewer(ctx, db, table, record("sub_1", w.state), w.v)
				if err != nil {
					t.Fatalf("PutIfNewer(%v): %v", w.v, err)
				}
				if ok {
					applied++
				}
			}
			if tt.wantApplied >= 0 && applied != tt.wantApplied {
				t.Errorf("applied %d writes, want %d", applied, tt.wantApplied)
			}
			got := getItem(t, db, table, "subscription#sub_1", "subscription")
			want := record("sub_1", tt.want.state)
			want["version_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(tt.want.v.At, 10)}
			want["version_event"] = str(tt.want.v.EventID)
			if diff := cmp.Diff(want, got, attrCmp); diff != "" {
				t.Errorf("final item (-want +got):\n%s", diff)
			}
			if v, ok := VersionOf(got); !ok || v != tt.want.v {
				t.Errorf("VersionOf = %v, %t; want %v", v, ok, tt.want.v)
			}
		})
	}
}

func TestPutIfNewerUnversionedItem(t *testing.T) {
	db, table := dynamoForTest(t)
	ctx := context.Background()
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: record("sub_1", "legacy")}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	ok, err := PutIfNewer(ctx, db, table, record("sub_1", "new"), Version{1, "evt_1"})
	if err != nil || !ok {
		t.Fatalf("PutIfNewer over an unversioned item = %t, %v; want applied", ok, err)
	}
}

func TestPutIfNewerInvalid(t *testing.T) {
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		v    Version
	}{
		{"NoPK", map[string]types.AttributeValue{"sk": str("x")}, Version{1, "evt_1"}},
		{"NoSK", map[string]types.AttributeValue{"pk": str("x")}, Version{1, "evt_1"}},
		{"NoEventID", record("sub_1", "x"), Version{1, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PutIfNewer(context.Background(), nil, "t", tt.item, tt.v)
			if err == nil || !isInvalid(err) {
				t.Errorf("err = %v, want errInvalid", err)
			}
		})
	}
}

func record(id, state string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":     str("subscription#" + id),
		"sk":     str("subscription"),
		"status": str(state),
	}
}

func getItem(t *testing.T, db testDynamoDB, table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName:      &table,
		Key:            map[string]types.AttributeValue{"pk": str(pk), "sk": str(sk)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem %s/%s: %v", pk, sk, err)
	}
	return out.Item
}

// attrCmp compares DynamoDB attribute values by their content.
var attrCmp = cmp.Transformer("attr", func(a types.AttributeValue) string {
	switch v := a.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL:%t", v.Value)
	default:
		return fmt.Sprintf("%T", a)
	}
})
