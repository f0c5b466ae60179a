package pipeline

import (
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// newRecorder records the requests of st's functions in dir (Options.IAMRecord).
func newRecorder(dir, test string, st *devstack.Stack) (*iamcheck.Recorder, error) {
	rec := iamcheck.Stack{
		Name: st.Name, Test: test, Params: st.Params, Region: devstack.Region, AccountID: devstack.AccountID,
		Resources: map[string]map[string]string{},
	}
	keys := map[string]string{} // "table" or "table/index" → partition key
	for id, name := range st.Tables {
		rec.Resources[id] = map[string]string{"": name, "Arn": "arn:aws:dynamodb:" + devstack.Region + ":" + devstack.AccountID + ":table/" + name}
		props := st.Template.Resources[id].Properties
		keys[name] = hashKey(props["KeySchema"])
		gsis, _ := props["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			gm, _ := g.(map[string]any)
			if index, ok := gm["IndexName"].(string); ok {
				keys[name+"/"+index] = hashKey(gm["KeySchema"])
			}
		}
	}
	for id, q := range st.Queues {
		rec.Resources[id] = map[string]string{"": q.URL, "QueueUrl": q.URL, "Arn": q.ARN, "QueueName": q.Name}
	}
	place := iamcheck.Place{
		Region: devstack.Region, AccountID: devstack.AccountID,
		PartitionKey: func(table, index string) string {
			if index != "" {
				table += "/" + index
			}
			return keys[table]
		},
	}
	return iamcheck.NewRecorder(dir, rec, place, st.Template.ByType(samtemplate.FunctionType))
}

// hashKey returns the HASH attribute of a KeySchema.
func hashKey(schema any) string {
	list, _ := schema.([]any)
	for _, k := range list {
		km, _ := k.(map[string]any)
		if km["KeyType"] == "HASH" {
			name, _ := km["AttributeName"].(string)
			return name
		}
	}
	return ""
}
